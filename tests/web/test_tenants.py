"""The owner and the others: every API route, taken from the app's own route table (so a
new route is covered without editing this file), is called with another tenant's key and
with the owner's; none reads or changes what it should not, and every refusal is a 403
with a reason. Then the key scopes (chat, read) over the same table, and what a tenant may
and may not change in personalities, memory and approvals."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from seam.apps.web.app import create_app
from seam.apps.web.auth import Authenticator
from seam.apps.web.backend import WebBackend
from seam.apps.web.keys import KeyStore
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from seam.plugins.memory.markdown import MarkdownMemory
from seam.plugins.personalities.files import FilePersonalityRegistry, write_default_personality
from seam.plugins.safety import injection, redact
from seam.wiring import assemble_runtime
from tests.web.harness import Served, serving, sse_events


def api_routes() -> list[tuple[str, str]]:
    """Every (method, path) of the API, read from a freshly built app's own table (its
    OpenAPI document lists every route it serves but the page's files)."""
    backend = WebBackend(assemble_runtime(model=ScriptedModel([])))
    app = create_app(backend, Authenticator(None, b"k" * 32, "t", "local"))
    found = {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        if path != "/healthz"
        for method in operations
    }
    assert len(found) > 10, found
    return sorted(found)


ROUTES = api_routes()
SECRETS = ("OWNER-SOUL", "OWNER-MEMORY", "ALPHA-SOUL", "ALPHA-MEMORY", "owner-msg", "alpha-msg")
# A body each route accepts (a route not listed gets `{}`: a new route is still called).
BODIES: dict[str, Any] = {
    "/api/sessions": {"name": "o"},
    "/api/sessions/{name}/messages": {"text": "hello"},
    "/api/sessions/{name}/approvals/{call_id}": {"decision": "once"},
    "/api/personalities/{pid}": {"soul": "BETA soul", "config": 'approval_mode = "off"'},
    "/api/memory": {"user": ["Beta likes coffee."]},
    "/v1/chat/completions": {"model": "default", "messages": [{"role": "user", "content": "hi"}]},
}


def fill(path: str, name: str) -> str:
    """`path` with every parameter given: sessions as `name`, personalities as default."""
    values = {"name": name, "pid": "default", "call_id": "c1"}
    return re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: values.get(m.group(1), "x"), path)


def files_digest(*folders: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for folder in folders
        if folder.exists()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


async def sessions_of(served: Served, *tenants: str) -> Any:
    """What the store holds for these tenants' sessions: transcripts and submissions."""
    marks = tuple(f'["{t}",' for t in tenants)
    exported = [
        s for s in await served.store.export_all() if any(m in str(s["key"]) for m in marks)
    ]
    subs = [
        (s.id, s.state, s.outcome)
        for s in await served.store.submissions()
        if any(m in s.session_key for m in marks)
    ]
    return exported, subs


@asynccontextmanager
async def world(tmp: Path) -> AsyncIterator[Served]:
    """The owner (`local`) and tenant `alpha`, each with a session, a personality and a
    memory holding words no one else may read; tenant `beta` with nothing yet."""
    write_default_personality(str(tmp / "p"))
    (tmp / "p" / "default" / "SOUL.md").write_text("You are OWNER-SOUL.", encoding="utf-8")
    model = ScriptedModel([text_step(f"answer {n}") for n in range(8)])
    async with serving(model, tmp) as served:
        runtime = served.backend.runtime
        runtime.personalities = FilePersonalityRegistry(str(tmp / "p"))
        runtime.loop.personalities = runtime.personalities
        runtime.memory = MarkdownMemory(tmp / "memory", scanner=injection, redactor=redact)
        served.backend.personalities_dir = tmp / "p"
        for tenant, name, word in (("local", "o", "OWNER"), ("alpha", "a", "ALPHA")):
            async with served.client(tenant) as client:
                memory = await client.put("/api/memory", json={"user": [f"{word}-MEMORY."]})
                assert memory.status_code == 200, memory.text
                sent = {"text": f"{word.lower()}-msg"}
                assert (await client.post(f"/api/sessions/{name}/messages", json=sent)).is_success
                await sse_events(client, f"/api/sessions/{name}/events")
        async with served.client("alpha") as alpha:
            soul = {"soul": "You are ALPHA-SOUL.", "config": 'name = "Alpha"'}
            assert (await alpha.put("/api/personalities/default", json=soul)).is_success
        yield served


def assert_refusal_or_own(response: httpx.Response) -> None:
    """A call reaches only the caller's own things, or is refused with a reason."""
    assert response.status_code < 500, response.text
    if response.status_code == 403:
        error = response.json()["error"]
        assert error["type"] == "forbidden" and error["message"].strip()
        assert "\n" not in error["message"]


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
async def test_another_tenant_reaches_nothing_of_the_owner_or_alpha(
    tmp_path: Path, method: str, path: str
) -> None:
    async with world(tmp_path) as served, served.client("beta") as beta:
        guarded = (tmp_path / "p", tmp_path / "memory", tmp_path / "tenants" / "alpha")
        before = files_digest(*guarded), await sessions_of(served, "local", "alpha")
        for name in ("o", "a"):
            body = BODIES.get(path, {}) if method in ("POST", "PUT", "PATCH") else None
            response = await beta.request(method, fill(path, name), json=body)
            assert_refusal_or_own(response)
            assert not any(s in response.text for s in SECRETS), response.text
        after = files_digest(*guarded), await sessions_of(served, "local", "alpha")
        assert after == before


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
async def test_the_owner_reaches_nothing_of_a_tenant(
    tmp_path: Path, method: str, path: str
) -> None:
    async with world(tmp_path) as served, served.client("local") as owner:
        guarded = (tmp_path / "tenants" / "alpha",)
        before = files_digest(*guarded), await sessions_of(served, "alpha")
        body = BODIES.get(path, {}) if method in ("POST", "PUT", "PATCH") else None
        if path == "/api/personalities/{pid}":
            body = {"soul": "You are OWNER-SOUL, again.", "config": ""}
        response = await owner.request(method, fill(path, "a"), json=body)
        assert response.status_code < 500, response.text
        assert not any(s in response.text for s in ("ALPHA-SOUL", "ALPHA-MEMORY", "alpha-msg"))
        assert (files_digest(*guarded), await sessions_of(served, "alpha")) == before


async def test_a_tenant_edits_its_own_personality_and_memory_never_the_owners(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as served, served.client("beta") as beta:
        owner_files = files_digest(tmp_path / "p", tmp_path / "memory")
        loosen = {"soul": "You are BETA.", "config": 'approval_mode = "off"\nnetwork = true\n'}
        refused = await beta.put("/api/personalities/default", json=loosen)
        assert refused.status_code == 403
        message = refused.json()["error"]["message"]
        assert "approval_mode" in message and "network" in message and "owner" in message
        for key in ('toolset = ["terminal"]', "[fs_reach]\nwrite = ['/']"):
            body = {"soul": "You are BETA.", "config": key}
            assert (await beta.put("/api/personalities/default", json=body)).status_code == 403
        own = await beta.put(
            "/api/personalities/default", json={"soul": "You are BETA.", "config": 'name = "B"'}
        )
        assert own.status_code == 200, own.text
        assert (await beta.get("/api/personalities/default")).json()["soul"] == "You are BETA."
        beta_dir = tmp_path / "tenants" / "beta"
        assert (beta_dir / "personalities" / "default" / "SOUL.md").read_text() == "You are BETA."
        assert (await beta.get("/api/memory")).json() == {"memory": [], "user": []}
        put = await beta.put("/api/memory", json={"memory": ["Beta's project is a boat."]})
        assert put.status_code == 200, put.text
        assert "boat" in (beta_dir / "memory" / "MEMORY.md").read_text()
        assert files_digest(tmp_path / "p", tmp_path / "memory") == owner_files
        async with served.client("local") as owner:
            assert "OWNER-SOUL" in (await owner.get("/api/personalities/default")).json()["soul"]
            assert (await owner.get("/api/memory")).json()["user"] == ["OWNER-MEMORY."]


async def test_only_the_owner_gives_a_lasting_approval_answer(tmp_path: Path) -> None:
    async with world(tmp_path) as served, served.client("alpha") as alpha:
        for decision in ("always", "never"):
            answer = await alpha.post("/api/sessions/a/approvals/c1", json={"decision": decision})
            assert answer.status_code == 403, answer.text
            assert "only the owner" in answer.json()["error"]["message"]
        metrics = await alpha.get("/metrics")
        assert metrics.status_code == 403 and "owner" in metrics.json()["error"]["message"]


@asynccontextmanager
async def scoped(tmp: Path, scope: str) -> AsyncIterator[httpx.AsyncClient]:
    model = ScriptedModel([text_step(f"answer {n}") for n in range(4)])
    async with serving(model, tmp) as served:
        key = KeyStore(tmp / "keys.json").create(f"{scope}-key", "local", scope)
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=served.url, headers=headers, timeout=20) as c:
            yield c


def reached_by(scope: str, method: str, path: str) -> bool:
    if scope == "read":
        return method in ("GET", "HEAD")
    return path.startswith(("/api/sessions", "/api/control", "/v1/"))


@pytest.mark.parametrize("scope", ["chat", "read"])
async def test_a_scoped_key_reaches_only_its_routes(tmp_path: Path, scope: str) -> None:
    async with scoped(tmp_path, scope) as client:
        for method, path in ROUTES:
            # `{}` is no valid body for a route with one: a reached route answers 4xx
            # for the body (or 404 for a session that does not exist), never 403.
            body = {} if method in ("POST", "PUT", "PATCH") else None
            response = await client.request(method, fill(path, "nobody"), json=body)
            assert response.status_code < 500, (method, path, response.text)
            if reached_by(scope, method, path):
                assert response.status_code != 403, (method, path, response.text)
            else:
                assert response.status_code == 403, (method, path, response.text)
                assert f"scope {scope}" in response.json()["error"]["message"]


def test_a_key_stored_without_a_scope_is_full(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    store = KeyStore(path)
    store.create("old", "local")
    data = json.loads(path.read_text())
    for key in data["keys"]:
        del key["scope"]
    path.write_text(json.dumps(data))
    assert [k.scope for k in KeyStore(path).list()] == ["full"]
    with pytest.raises(ValueError, match="scope"):
        store.create("bad", "local", "admin")
