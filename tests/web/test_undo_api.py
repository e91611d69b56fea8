"""Undo, changes and fork over the web API: a real server on loopback whose turns take
real checkpoints (real files, the shadow-git engine); only the model is scripted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from seam.apps.web.keys import KeyStore
from seam.core import ScriptedModel
from seam.core.scripted_model import call, text_step, tool_step
from tests.checkpoints.surface_support import equip, equip_terminal, write_turn
from tests.web.harness import Served, serving, sse_events


async def turn(client: httpx.AsyncClient, name: str, text: str, done: int) -> None:
    """Post `text` and read the events until the session's `done`-th turn ended."""
    sent = await client.post(f"/api/sessions/{name}/messages", json={"text": text})
    assert sent.status_code == 202, sent.text
    await sse_events(client, f"/api/sessions/{name}/events", count=done)


def users(detail: dict[str, Any]) -> list[str]:
    return [m["content"] for m in detail["messages"] if m["role"] == "user"]


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            *write_turn("a.txt", "from turn 1\n"),
            *write_turn("notes.txt", "turn 2 was here\n"),
            text_step("after the undo"),
        ]
    )


async def two_turns(served: Served, tmp: Path) -> Path:
    root = equip(served.backend.runtime, tmp)
    async with served.client() as client:
        await turn(client, "s", "one", 1)
        await turn(client, "s", "two", 2)
    return root


async def test_undo_restores_the_files_and_the_next_turn_forgets(tmp_path: Path) -> None:
    model = script()
    async with serving(model, tmp_path) as served, served.client() as client:
        root = await two_turns(served, tmp_path)
        shown = await client.get("/api/sessions/s/changes")
        assert shown.status_code == 200, shown.text
        body = shown.json()
        assert body["turn"] == 2 and body["files"] == [{"path": "notes.txt", "kind": "M"}]
        assert "+turn 2 was here" in body["diff"]
        first = (await client.get("/api/sessions/s/changes", params={"turn": 1})).json()
        assert first["files"] == [{"path": "a.txt", "kind": "A"}]
        undone = await client.post("/api/sessions/s/undo")
        assert undone.status_code == 200, undone.text
        assert undone.json()["restored"] == [
            {"path": "notes.txt", "kind": "M", "action": "restored"}
        ]
        assert (root / "notes.txt").read_text() == "first version\n"
        detail = (await client.get("/api/sessions/s")).json()
        assert users(detail) == ["one"]
        await turn(client, "s", "three", 3)
        sent = " ".join(m.content for m in model.requests[-1].messages)
        assert "turn 2 was here" not in sent and "two" not in sent.split()
        again = await client.post("/api/sessions/s/undo", json={})
        assert again.status_code == 200 and again.json()["restored"][0]["action"] == "deleted"
        assert not (root / "a.txt").exists()
        nothing = await client.post("/api/sessions/s/undo")
        assert nothing.status_code == 409 and "nothing to undo" in nothing.text


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def approve_always(client: httpx.AsyncClient, name: str) -> int:
    """Answer the turn's waiting approval "always" as a person on the web page does;
    returns the id of the last event read."""
    asked = await sse_events(client, f"/api/sessions/{name}/events", until="tool_approval_required")
    call_id = asked[-1]["data"]["call_id"]
    answer = await client.post(
        f"/api/sessions/{name}/approvals/{call_id}", json={"decision": "always"}
    )
    assert answer.status_code == 200, answer.text
    last: int = asked[-1]["id"]
    return last


async def test_undo_puts_back_a_create_an_edit_and_an_rm(tmp_path: Path) -> None:
    """The issue's scenario: one turn creates new.txt, edits notes.txt and `rm`s old.bin
    through the real terminal on the process backend (approved "always" through the
    API); undo puts all three back byte for byte and the model never sees the turn again."""
    model = ScriptedModel(
        [
            tool_step(
                call("write_file", path="new.txt", content="created\n"),
                call("write_file", path="notes.txt", content="UNDONE-EDIT\n"),
                call("terminal", command="rm old.bin"),
            ),
            text_step("tidied"),
            text_step("after the undo"),
        ]
    )
    async with serving(model, tmp_path) as served, served.client() as client:
        root = equip(served.backend.runtime, tmp_path)
        equip_terminal(served.backend.runtime, tmp_path)
        (root / "old.bin").write_bytes(bytes(range(256)) * 4)
        before = files(root)
        sent = await client.post("/api/sessions/s/messages", json={"text": "tidy up"})
        assert sent.status_code == 202, sent.text
        after = await approve_always(client, "s")
        await sse_events(client, f"/api/sessions/s/events?after={after}")
        assert "rm old.bin" in (tmp_path / "approvals.json").read_text()
        assert not (root / "old.bin").exists() and (root / "new.txt").exists()
        undone = await client.post("/api/sessions/s/undo")
        assert undone.status_code == 200, undone.text
        assert sorted((r["path"], r["action"]) for r in undone.json()["restored"]) == [
            ("new.txt", "deleted"),
            ("notes.txt", "restored"),
            ("old.bin", "recreated"),
        ]
        assert files(root) == before
        detail = (await client.get("/api/sessions/s")).json()
        assert detail["messages"] == []
        await turn(client, "s", "what now?", 2)
        seen = " ".join(m.content for m in model.requests[-1].messages)
        for gone in ("tidy up", "UNDONE-EDIT", "rm old.bin", "tidied"):
            assert gone not in seen, seen
        assert "what now?" in seen


async def test_a_user_edit_needs_force(tmp_path: Path) -> None:
    async with serving(script(), tmp_path) as served, served.client() as client:
        root = await two_turns(served, tmp_path)
        (root / "notes.txt").write_text("mine\n")
        refused = await client.post("/api/sessions/s/undo", json={})
        assert refused.status_code == 409 and "force" in refused.json()["error"]["message"]
        assert (root / "notes.txt").read_text() == "mine\n"
        forced = await client.post("/api/sessions/s/undo", json={"force": True})
        assert forced.status_code == 200, forced.text
        assert (root / "notes.txt").read_text() == "first version\n"


async def test_fork_and_its_bad_input(tmp_path: Path) -> None:
    async with serving(script(), tmp_path) as served, served.client() as client:
        root = await two_turns(served, tmp_path)
        made = await client.post("/api/sessions/s/fork", json={"at": 1, "as": "branch"})
        assert made.status_code == 201, made.text
        assert made.json()["session"] == "branch" and made.json()["restored"] == []
        assert users((await client.get("/api/sessions/branch")).json()) == ["one"]
        assert (root / "notes.txt").read_text() == "turn 2 was here\n"
        for body, code in (
            ({"at": 3}, 422),
            ({"at": 0}, 422),
            ({"at": "x"}, 422),
            ({"at": 1, "as": "task:x"}, 422),
            ({"at": 1, "as": "branch"}, 409),
            ({"at": 1, "nope": 1}, 422),
        ):
            bad = await client.post("/api/sessions/s/fork", json=body)
            assert bad.status_code == code, (body, bad.text)
            assert "\n" not in bad.json()["error"]["message"]
        unknown = await client.post("/api/sessions/nobody/fork", json={"at": 1})
        assert unknown.status_code == 404
        assert (await client.post("/api/sessions/nobody/undo")).status_code == 404
        assert (await client.get("/api/sessions/nobody/changes")).status_code == 404
        restored = await client.post(
            "/api/sessions/s/fork", json={"at": 1, "as": "back", "restore": True}
        )
        assert restored.json()["restored"] == [
            {"path": "notes.txt", "kind": "M", "action": "restored"}
        ]
        assert (root / "notes.txt").read_text() == "first version\n"
        assert len(users((await client.get("/api/sessions/s")).json())) == 2


async def test_scopes_and_tenants(tmp_path: Path) -> None:
    async with serving(script(), tmp_path) as served:
        root = await two_turns(served, tmp_path)
        key = KeyStore(tmp_path / "keys.json").create("reader", "local", "read")
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=served.url, headers=headers, timeout=20) as reader:
            assert (await reader.get("/api/sessions/s/changes")).status_code == 200
            for path in ("/api/sessions/s/undo", "/api/sessions/s/fork"):
                refused = await reader.post(path, json={"at": 1})
                assert refused.status_code == 403, refused.text
        async with served.client("alpha") as alpha:
            assert (await alpha.get("/api/sessions/s/changes")).status_code == 404
            assert (await alpha.post("/api/sessions/s/undo")).status_code == 404
            assert (await alpha.post("/api/sessions/s/fork", json={"at": 1})).status_code == 404
        assert (root / "notes.txt").read_text() == "turn 2 was here\n"


async def test_without_checkpoints_undo_is_a_conflict_and_fork_still_works(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([text_step("hi")])
    async with serving(model, tmp_path) as served, served.client() as client:
        await turn(client, "s", "one", 1)
        off = await client.post("/api/sessions/s/undo")
        assert off.status_code == 409 and "checkpoints are off" in off.text
        assert (await client.get("/api/sessions/s/changes")).status_code == 409
        made = await client.post("/api/sessions/s/fork", json={"at": 1, "as": "f"})
        assert made.status_code == 201 and made.json()["files_tracked"] is False
