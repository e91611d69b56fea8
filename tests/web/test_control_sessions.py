"""The dashboard's Sessions section over a real server: the listing's tokens and cost,
rename (the durable key moves: the store lists the new name, the old one is gone),
export as JSON (what `seam sessions export` prints) and markdown downloads, and every
action scoped to the caller's tenant."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from seam.apps.cli.sessions import named_export
from seam.apps.web.keys import KeyStore
from seam.contracts.messages import Usage
from seam.contracts.sessions import UsageRecord
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from seam.services.sessions.postgres import PostgresStore
from tests.web.harness import Served, serving, sse_events

Alpha = tuple[Served, httpx.AsyncClient]


@pytest.fixture(params=["sqlite", "postgres"])
async def on_either_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Alpha]:
    """A server (its model answers "ok" four times) on the harness's SQLite file or on a
    PostgreSQL schema of the test's own (the server closes it when it stops), and tenant
    alpha's client of it."""
    store = None
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_url")
        store = await PostgresStore.connect(url, schema=request.getfixturevalue("postgres_schema"))
    async with as_alpha(tmp_path, "ok", "ok", "ok", "ok", store=store) as both:
        yield both


@asynccontextmanager
async def as_alpha(
    tmp_path: Path, *answers: str, store: Any = None
) -> AsyncIterator[tuple[Served, httpx.AsyncClient]]:
    """A server whose model gives `answers`, and tenant alpha's client of it."""
    model = ScriptedModel([text_step(a) for a in answers])
    async with serving(model, tmp_path, store=store) as served, served.client("alpha") as alpha:
        yield served, alpha


async def chat(client: httpx.AsyncClient, name: str, text: str) -> None:
    """One finished turn in `name` (created on first use)."""
    sent = await client.post(f"/api/sessions/{name}/messages", json={"text": text})
    assert sent.status_code == 202, sent.text
    await sse_events(client, f"/api/sessions/{name}/events")


async def priced(served: Served, tenant: str, name: str) -> None:
    """A priced model call recorded against the session, as a turn records one."""
    key = served.backend.key_for(tenant, name)
    usage = Usage(input_tokens=1200, output_tokens=300)
    await served.store.record_usage(key, UsageRecord("test", "m", usage, cost_usd=0.0125))


async def names_in_store(served: Served) -> set[str]:
    """What `seam sessions list` lists: every stored key's public name."""
    runtime = served.backend.runtime
    return {runtime.session_name_of(info.key) for info in await runtime.sessions.list(50)}


async def test_the_listing_and_search_carry_each_sessions_tokens_and_cost(
    on_either_store: Alpha,
) -> None:
    """The totals `seam sessions show` prints, in the listing and in each search hit."""
    served, alpha = on_either_store
    await chat(alpha, "trip", "plan a trip to the lighthouse")
    await chat(alpha, "other", "hello")
    await priced(served, "alpha", "trip")
    plain = (await alpha.get("/api/sessions")).json()["sessions"]
    assert all("usage" not in s for s in plain)  # the chat's sidebar: the cheap listing
    with_usage = await alpha.get("/api/sessions", params={"usage": "true"})
    listed = {s["name"]: s for s in with_usage.json()["sessions"]}
    usage = listed["trip"]["usage"]
    assert usage["cost_usd"] >= 0.0125 and usage["input_tokens"] >= 1200
    assert usage["calls"] == 2 and listed["other"]["usage"]["calls"] == 1
    found = (await alpha.get("/api/sessions", params={"q": "lighthouse", "usage": True})).json()
    assert [s["name"] for s in found["sessions"]] == ["trip"]
    assert found["sessions"][0]["usage"] == usage


async def test_rename_moves_the_session_so_every_surface_sees_the_new_name(
    on_either_store: Alpha,
) -> None:
    served, alpha = on_either_store
    key = served.backend.key_for("alpha", "draft")
    await chat(alpha, "draft", "first question")
    await served.store.set_title(key, "Lighthouse plans")
    await priced(served, "alpha", "draft")
    before = (await alpha.get("/api/sessions/draft")).json()
    done = await alpha.patch("/api/sessions/draft", json={"name": "final plan"})
    assert done.status_code == 200, done.text
    assert done.json() == {"name": "final plan", "previous": "draft"}
    assert await names_in_store(served) == {"final plan"}
    after = (await alpha.get("/api/sessions/final plan")).json()
    assert after["messages"] == before["messages"]
    assert after["usage"]["input_tokens"] == before["usage"]["input_tokens"]
    assert after["usage"]["cost_usd"] == before["usage"]["cost_usd"]
    listed = (await alpha.get("/api/sessions")).json()["sessions"]
    assert [(s["name"], s["title"]) for s in listed] == [("final plan", "Lighthouse plans")]
    assert (await alpha.get("/api/sessions/draft")).status_code == 404
    # The renamed session goes on: a new turn sees the whole conversation. (Its stream
    # replays the first turn's `done` too: read on to the second, the new turn's.)
    sent = await alpha.post("/api/sessions/final plan/messages", json={"text": "and then?"})
    assert sent.status_code == 202, sent.text
    await sse_events(alpha, "/api/sessions/final plan/events", count=2)
    assert len((await alpha.get("/api/sessions/final plan")).json()["messages"]) == 4


async def test_rename_refuses_a_taken_name_a_bad_name_and_an_unknown_session(
    tmp_path: Path,
) -> None:
    async with as_alpha(tmp_path, "a", "b") as (served, alpha):
        await chat(alpha, "one", "hi")
        await chat(alpha, "two", "hi")
        taken = await alpha.patch("/api/sessions/one", json={"name": "two"})
        assert taken.status_code == 409 and "two" in taken.json()["error"]["message"]
        bad = await alpha.patch("/api/sessions/one", json={"name": "task:x"})
        assert bad.status_code == 400, bad.text
        assert "\n" not in bad.json()["error"]["message"]
        assert (await alpha.patch("/api/sessions/one", json={"name": ""})).status_code == 422
        extra = await alpha.patch("/api/sessions/one", json={"name": "z", "x": 1})
        assert extra.status_code == 422
        missing = await alpha.patch("/api/sessions/nope", json={"name": "z"})
        assert missing.status_code == 404
        same = await alpha.patch("/api/sessions/one", json={"name": "one"})
        assert same.status_code == 200
        assert await names_in_store(served) == {"one", "two"}


async def test_export_downloads_the_clis_json_and_a_markdown_transcript(tmp_path: Path) -> None:
    async with as_alpha(tmp_path, "Use ``` fences, like this.") as (served, alpha):
        await chat(alpha, "notes", "how do I quote code?")
        as_json = await alpha.get("/api/sessions/notes/export", params={"format": "json"})
        assert as_json.status_code == 200
        assert as_json.headers["content-type"].startswith("application/json")
        assert 'attachment; filename="notes.json"' in as_json.headers["content-disposition"]
        runtime = served.backend.runtime
        key = served.backend.key_for("alpha", "notes")
        cli = named_export(runtime, await runtime.sessions.export(key))
        assert json.loads(as_json.text) == json.loads(json.dumps(cli))
        as_md = await alpha.get("/api/sessions/notes/export", params={"format": "markdown"})
        assert as_md.status_code == 200
        assert as_md.headers["content-type"].startswith("text/markdown")
        assert 'filename="notes.md"' in as_md.headers["content-disposition"]
        text = as_md.text
        assert text.startswith("# notes\n") and "## You\n\nhow do I quote code?" in text
        assert "## Seam\n\nUse ``` fences, like this." in text
        bad = await alpha.get("/api/sessions/notes/export", params={"format": "pdf"})
        assert bad.status_code == 422
        assert (await alpha.get("/api/sessions/nope/export")).status_code == 404


async def test_an_odd_session_name_cannot_break_the_download_header(tmp_path: Path) -> None:
    async with as_alpha(tmp_path, "ok") as (_served, alpha):
        await chat(alpha, 'a "quoted"; name é', "hi")
        got = await alpha.get('/api/sessions/a "quoted"; name é/export')
        assert got.status_code == 200
        disposition = got.headers["content-disposition"]
        assert disposition.startswith('attachment; filename="a__quoted___name_')
        assert "filename*=UTF-8''a%20%22quoted%22%3B%20name%20%C3%A9.json" in disposition


async def test_a_tenant_reaches_only_its_own_sessions(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("a"), text_step("b")])
    async with (
        serving(model, tmp_path) as served,
        served.client("alpha") as alpha,
        served.client("beta") as beta,
    ):
        await chat(alpha, "mine", "alpha-secret")
        await chat(beta, "theirs", "beta-secret")
        assert [s["name"] for s in (await beta.get("/api/sessions")).json()["sessions"]] == [
            "theirs"
        ]
        found = (await beta.get("/api/sessions", params={"q": "alpha-secret"})).json()
        assert found["sessions"] == []
        assert (await beta.get("/api/sessions/mine/export")).status_code == 404
        renamed = await beta.patch("/api/sessions/mine", json={"name": "stolen"})
        assert renamed.status_code == 404
        assert (await beta.delete("/api/sessions/mine")).status_code == 404
        # Each tenant's names are its own: beta may use the name alpha uses.
        assert (await beta.patch("/api/sessions/theirs", json={"name": "mine"})).status_code == 200
        assert await names_in_store(served) == {"mine"}
        assert (await alpha.get("/api/sessions/mine")).json()["messages"][0]["content"] == (
            "alpha-secret"
        )


async def test_a_read_key_exports_but_never_renames(tmp_path: Path) -> None:
    async with as_alpha(tmp_path, "ok") as (served, alpha):
        await chat(alpha, "kept", "hi")
        key = KeyStore(tmp_path / "keys.json").create("reader", "alpha", "read")
        async with httpx.AsyncClient(
            base_url=served.url, headers={"Authorization": f"Bearer {key}"}
        ) as reader:
            assert (await reader.get("/api/sessions/kept/export")).status_code == 200
            refused = await reader.patch("/api/sessions/kept", json={"name": "other"})
            assert refused.status_code == 403
        assert await names_in_store(served) == {"kept"}
