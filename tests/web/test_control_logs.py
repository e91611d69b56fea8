"""The Logs section's API: the structured log's last lines filtered by level, session and
surface, and new lines streamed as they are written (across a rotation). The log is
written by the real handler (`JsonLinesHandler`, redacting) into the served home, by a
real turn whose model warned."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from seam.apps.cli.json_log import JsonLinesHandler
from seam.contracts.model import ModelChunk, ModelRequest, WarningChunk
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from seam.wiring.logs import redacting_filter
from seam.wiring.secrets import redactor_for_env
from tests.support.collect import collect
from tests.web.harness import serving, sse_events

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
STREAM = {"Accept": "text/event-stream"}


class WarningModel(ScriptedModel):
    """The scripted model that also warns (a provider's warning chunk) on each answer."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        yield WarningChunk("the context is nearly full")
        async for chunk in super().stream(request):
            yield chunk


@pytest.fixture
def home_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JsonLinesHandler]:
    """The web surface's JSON log handler, writing into the served home (`tmp/home`)."""
    monkeypatch.setenv("SEAM_HOME", str(tmp_path / "home"))
    # Earlier tests' garbage is not this test's log: a task of an event loop an earlier
    # test closed (an MCP client's `aclose`, say) logs "Task exception was never
    # retrieved" when the collector finds it, which could fall inside this handler's
    # window. Collect it before the handler is attached.
    collect()
    handler = JsonLinesHandler(max_bytes=2_000, keep=3, surface="web")
    handler.addFilter(redacting_filter(redactor_for_env({})))
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    saved = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield handler
    root.removeHandler(handler)
    root.setLevel(saved)
    handler.close()


async def test_a_turns_warning_is_found_by_level_session_and_surface(
    tmp_path: Path, home_log: JsonLinesHandler
) -> None:
    model = WarningModel([text_step("hello"), text_step("again")])
    async with serving(model, tmp_path) as served, served.client() as owner:
        for name in ("s1", "s2"):
            assert (await owner.post("/api/sessions", json={"name": name})).status_code < 300
            sent = await owner.post(f"/api/sessions/{name}/messages", json={"text": "hi"})
            assert sent.status_code < 300, sent.text
            await sse_events(owner, f"/api/sessions/{name}/events")
        logging.getLogger("seam.test").warning("a line outside any turn")

        async def found(**query: Any) -> list[dict[str, Any]]:
            response = await owner.get("/api/logs", params=query)
            assert response.status_code == 200, response.text
            lines: list[dict[str, Any]] = response.json()["lines"]
            return lines

        [line] = await found(level="warning", session="s1", surface="web")
        assert line["message"] == "model warning: the context is nearly full"
        assert (line["level"], line["surface"], line["session_name"]) == ("warning", "web", "s1")
        assert line["logger"] == "seam.loop" and line["submission"]
        warnings = (await found(level="warning"))[-3:]  # after the server's own
        assert [line["message"] for line in warnings] == [
            "model warning: the context is nearly full",
            "model warning: the context is nearly full",
            "a line outside any turn",
        ]
        assert warnings[0]["session_name"] == "s1" and warnings[1]["session_name"] == "s2"
        assert "session" not in warnings[2]
        assert await found(level="error") == []
        assert await found(surface="gateway") == []
        assert await found(session="nobody") == []
        [last] = await found(level="WARNING", limit=1)
        assert last["message"] == "a line outside any turn"


async def test_the_stream_sends_lines_written_after_it_opened_across_a_rotation(
    tmp_path: Path, home_log: JsonLinesHandler
) -> None:
    log = logging.getLogger("seam.test.stream")
    log.warning("before the stream opened")
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        query = "/api/logs/stream?level=warning"
        async with owner.stream("GET", query, headers=STREAM) as response:
            assert response.status_code == 200
            events = _events(response)
            assert (await asyncio.wait_for(anext(events), 20))["event"] == "ready"
            log.info("an info line the filter drops")
            log.warning("the key is %s", SECRET)
            # Lines until the 2,000-byte file rotates once (seam.jsonl -> .1), then three.
            rotated = tmp_path / "home" / "logs" / "seam.jsonl.1"
            burst = 0
            while not rotated.exists():
                log.warning("line %d of a burst", burst)
                burst += 1
            for burst in range(burst, burst + 3):  # noqa: B020 (going on counting)
                log.warning("line %d of a burst", burst)
            burst += 1
            seen: list[dict[str, Any]] = []
            while len(seen) < 1 + burst:
                event = await asyncio.wait_for(anext(events), 20)
                assert event["event"] == "lines"
                seen += event["data"]
    messages = [line["message"] for line in seen]
    assert messages[0].startswith("the key is ") and SECRET not in messages[0]
    assert SECRET not in json.dumps(seen)
    assert messages[1:] == [f"line {n} of a burst" for n in range(burst)]
    assert all(line["level"] == "warning" and line["surface"] == "web" for line in seen)


async def _events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    item: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            item["event"] = line[7:]
        elif line.startswith("data: "):
            item["data"] = json.loads(line[6:])
        elif line == "" and item:
            yield item
            item = {}


async def test_a_secret_already_in_the_file_is_not_shown(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        folder = tmp_path / "home" / "logs"
        folder.mkdir(parents=True)
        raw = {"ts": 1.5, "level": "error", "logger": "x", "message": f"key {SECRET}"}
        (folder / "seam.jsonl").write_text(json.dumps(raw) + "\nnot json\n", encoding="utf-8")
        [line] = (await owner.get("/api/logs")).json()["lines"]
        assert SECRET not in line["message"] and line["message"].startswith("key ")


async def test_bad_queries_and_other_tenants_get_one_line_errors(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        loud = await owner.get("/api/logs", params={"level": "loud"})
        assert loud.status_code == 400
        assert loud.json()["error"]["message"].startswith("level must be one of debug, info")
        assert (await owner.get("/api/logs", params={"limit": 0})).status_code == 422
        assert (
            await owner.get("/api/logs/stream", params={"level": "x"}, headers=STREAM)
        ).status_code == 400
        plain = await owner.get("/api/logs/stream")
        assert plain.status_code == 406 and "text/event-stream" in plain.json()["error"]["message"]
        async with served.client("alpha") as alpha:
            for path in ("/api/logs", "/api/logs/stream"):
                refused = await alpha.get(path, headers=STREAM)
                assert refused.status_code == 403
                assert "owner" in refused.json()["error"]["message"]
