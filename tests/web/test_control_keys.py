"""The Keys section's API over a real server: create (shown once), list (never a hash),
revoke (the key's next request is refused at once), and who may do it."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from seam.core import ScriptedModel
from tests.web.harness import serving


def error_of(response: httpx.Response) -> str:
    message: str = response.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    return message


async def test_a_created_key_works_at_once_and_a_revoked_one_is_refused_at_once(
    tmp_path: Path,
) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        made = await owner.post("/api/keys", json={"name": "laptop", "scope": "read"})
        assert made.status_code == 201, made.text
        body = made.json()
        key = body["key"]
        assert key.startswith("seam_") and body["prefix"] == key[:9]
        assert (body["tenant"], body["scope"], body["owner"]) == ("local", "read", True)
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=served.url, headers=headers) as laptop:
            assert (await laptop.get("/api/sessions")).status_code == 200
            # scope read: GET only
            assert (await laptop.post("/api/sessions", json={})).status_code == 403
            gone = await owner.delete("/api/keys/laptop")
            assert gone.status_code == 200 and gone.json() == {"revoked": "laptop"}
            refused = await laptop.get("/api/sessions")
            assert refused.status_code == 401, refused.text


async def test_the_list_shows_every_key_but_never_its_hash_or_the_key(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        made = (await owner.post("/api/keys", json={"name": "ci", "tenant": "alpha"})).json()
        listed = await owner.get("/api/keys")
        assert listed.status_code == 200
        keys = {k["name"]: k for k in listed.json()["keys"]}
        assert set(keys) == {"key-local", "key-alpha", "key-beta", "ci"}
        assert keys["ci"]["tenant"] == "alpha" and keys["ci"]["owner"] is False
        assert set(keys["ci"]) == {"name", "tenant", "scope", "prefix", "created_at", "owner"}
        stored = json.loads((tmp_path / "keys.json").read_text())["keys"]
        text = listed.text
        assert made["key"] not in text
        assert all(k["hash"] not in text for k in stored)
        # the new tenant's key reaches its own sessions
        async with httpx.AsyncClient(
            base_url=served.url, headers={"Authorization": f"Bearer {made['key']}"}
        ) as ci:
            assert (await ci.get("/api/sessions")).status_code == 200


async def test_bad_requests_get_one_line_and_the_right_status(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        assert (await owner.post("/api/keys", json={"name": "a"})).status_code == 201
        again = await owner.post("/api/keys", json={"name": "a"})
        assert again.status_code == 409 and "exists" in error_of(again)
        scope = await owner.post("/api/keys", json={"name": "b", "scope": "admin"})
        assert scope.status_code == 400 and "scope" in error_of(scope)
        for name in ("", "   ", "x" * 101):
            bad = await owner.post("/api/keys", json={"name": name})
            assert bad.status_code == 400 and "name" in error_of(bad), name
        tenant = await owner.post("/api/keys", json={"name": "c", "tenant": "../x"})
        assert tenant.status_code == 400 and "tenant" in error_of(tenant)
        extra = await owner.post("/api/keys", json={"name": "d", "hash": "x"})
        assert extra.status_code == 422
        unknown = await owner.delete("/api/keys/nobody")
        assert unknown.status_code == 404 and "nobody" in error_of(unknown)
        names = {k["name"] for k in (await owner.get("/api/keys")).json()["keys"]}
        assert names == {"key-local", "key-alpha", "key-beta", "a"}


async def test_a_request_cannot_revoke_the_key_it_came_with(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        own = await owner.delete("/api/keys/key-local")
        assert own.status_code == 409 and "came with" in error_of(own)
        assert (await owner.get("/api/keys")).status_code == 200


async def test_only_the_owner_reaches_the_keys(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client("alpha") as alpha:
        assert (await alpha.get("/api/keys")).status_code == 403
        assert (await alpha.post("/api/keys", json={"name": "mine"})).status_code == 403
        refused = await alpha.delete("/api/keys/key-beta")
        assert refused.status_code == 403 and "owner" in error_of(refused)
        sections = (await alpha.get("/api/control")).json()["sections"]
        assert "keys" not in {s["id"] for s in sections}
        async with served.client() as owner:
            names = {k["name"] for k in (await owner.get("/api/keys")).json()["keys"]}
            assert "key-beta" in names and "mine" not in names
