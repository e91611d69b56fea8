"""The dashboard's Usage section over a real server: tokens and cost summed per day, per
model and per session from the store (the scripted model reports each call's usage), for
the caller's tenant only, and the fixed prompt overhead of a request."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from seam.contracts.messages import Usage
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from tests.web.harness import Served, serving, sse_events


async def turn(served: Served, tenant: str, session: str, text: str) -> None:
    async with served.client(tenant) as client:
        sent = await client.post(f"/api/sessions/{session}/messages", json={"text": text})
        assert sent.status_code == 202, sent.text
        await sse_events(client, f"/api/sessions/{session}/events")


def steps() -> list[Any]:
    return [
        text_step("one", usage=Usage(100, 10, 40)),
        text_step("two", usage=Usage(200, 20, 0)),
        text_step("three", usage=Usage(1000, 1, 1)),
    ]


async def test_usage_sums_per_day_model_and_session_for_the_tenant(tmp_path: Path) -> None:
    async with serving(ScriptedModel(steps()), tmp_path) as served:
        await turn(served, "local", "first", "hi")
        await turn(served, "local", "second", "hello")
        await turn(served, "alpha", "theirs", "hey")
        async with served.client() as client:
            answer = await client.get("/api/usage")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["days"] == 30 and len(body["per_day"]) == 30
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        assert body["per_day"][-1]["day"] == today
        assert body["per_day"][-1]["input_tokens"] == 300
        assert body["per_day"][-1]["cache_read_tokens"] == 40
        assert sum(d["calls"] for d in body["per_day"]) == 2
        assert [(m["model"], m["output_tokens"]) for m in body["per_model"]] == [
            ("scripted-model", 30)
        ]
        sessions = {s["session"]: s["input_tokens"] for s in body["per_session"]}
        assert sessions == {"first": 100, "second": 200}
        assert body["total"]["input_tokens"] == 300 and body["total"]["calls"] == 2
        overhead = body["overhead"]
        assert overhead["tokens"] > 0 and overhead["window"] > overhead["tokens"]
        assert overhead["personality"]

        async with served.client("alpha") as client:
            theirs = (await client.get("/api/usage?days=7")).json()
        assert [s["session"] for s in theirs["per_session"]] == ["theirs"]
        assert theirs["total"]["input_tokens"] == 1000 and len(theirs["per_day"]) == 7


async def test_bad_usage_parameters_get_one_line_errors(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as client:
        for query in ("days=0", "days=5000", "days=x", "tz=100000"):
            answer = await client.get(f"/api/usage?{query}")
            assert answer.status_code == 422, query
            assert "\n" not in answer.json()["error"]["message"]
        empty = (await client.get("/api/usage?days=1&tz=-600")).json()
        assert empty["per_session"] == [] and empty["total"]["calls"] == 0
        assert len(empty["per_day"]) == 1 and empty["per_day"][0]["calls"] == 0
