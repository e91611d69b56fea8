"""The dashboard's MCP routes over a real server, against a real stdio MCP server and one
whose command exits: each state with its reason, the tools and their approvals, and the
`approval` setting written back to `config.toml` with its comments kept."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx

from seam.core import ScriptedModel
from seam.wiring.mcp import build_mcp
from seam.wiring.settings import Settings, read_config
from tests.web.harness import serving

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"

CONFIG = f"""# my agent's config: keep this comment
[mcp.servers.notes]
command = [{str(sys.executable)!r}, {str(SERVER)!r}]
tools = {{ allow = ["add", "search", "delete_*"] }}  # picture stays hidden
connect_timeout = 30

[mcp.servers.gone]
command = [{str(sys.executable)!r}, "-c", "raise SystemExit(3)"]
connect_timeout = 30
"""


def write_config(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "home" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def servers_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {server["name"]: server for server in body["servers"]}


def tools_of(server: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in server["tools"]}


async def test_states_tools_and_approvals_started_and_stopped(tmp_path: Path) -> None:
    write_config(tmp_path)
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        response = await owner.get("/api/mcp/servers")
        assert response.status_code == 200, response.text
        found = servers_of(response.json())
        notes, gone = found["notes"], found["gone"]
        assert notes["state"] == "connected" and notes["reason"] == ""
        assert notes["approval"] == "auto" and notes["allow"] == ["add", "search", "delete_*"]
        tools = tools_of(notes)
        add = {"name": "mcp__notes__add", "offered": True, "asks": False}
        assert tools["mcp__notes__add"] == add
        assert tools["mcp__notes__delete_note"]["asks"]
        assert tools["picture"] == {"name": "picture", "offered": False, "asks": False}
        assert gone["state"] == "failed" and gone["reason"] and gone["tools"] == []


async def test_setting_approval_keeps_comments_and_the_live_runtime_takes_it(
    tmp_path: Path,
) -> None:
    path = write_config(tmp_path)
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        runtime = served.backend.runtime
        runtime.mcp = build_mcp(Settings(home=tmp_path / "home", working_dir=tmp_path))
        try:
            before = servers_of((await owner.get("/api/mcp/servers")).json())["notes"]
            assert before["state"] == "connected"
            changed = await owner.put(
                "/api/mcp/servers/notes/approval", json={"approval": "always"}
            )
            assert changed.json() == {"name": "notes", "approval": "always"}
            text = path.read_text(encoding="utf-8")
            assert "# my agent's config: keep this comment" in text
            assert "# picture stays hidden" in text
            assert read_config(path).mcp.servers["notes"].approval == "always"
            after = servers_of((await owner.get("/api/mcp/servers")).json())["notes"]
            assert after["approval"] == "always" and after["state"] == "connected"
            assert all(t["asks"] for t in after["tools"] if t["offered"])
            # A hand edit (or another process's) is seen at the next look.
            path.write_text(text.replace('approval = "always"', 'approval = "never"'))
            edited = servers_of((await owner.get("/api/mcp/servers")).json())["notes"]
            assert edited["approval"] == "never"
            assert not any(t["asks"] for t in edited["tools"])
        finally:
            await runtime.mcp.aclose()


async def set_to(owner: httpx.AsyncClient, name: str, body: dict[str, Any]) -> int:
    response = await owner.put(f"/api/mcp/servers/{name}/approval", json=body)
    assert "\n" not in response.json()["error"]["message"] if response.is_error else True
    return response.status_code


async def test_bad_requests_get_one_line_errors(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        assert await set_to(owner, "nope", {"approval": "never"}) == 404
        assert await set_to(owner, "notes", {"approval": "sometimes"}) == 422
        assert await set_to(owner, "notes", {"approval": "never", "x": 1}) == 422
        path.write_text("[mcp.servers.bad\n", encoding="utf-8")
        broken = await owner.get("/api/mcp/servers")
        assert broken.status_code == 409 and "not valid TOML" in broken.text
        assert await set_to(owner, "bad", {"approval": "never"}) == 409
        path.unlink()
        assert (await owner.get("/api/mcp/servers")).json() == {"servers": []}
        assert await set_to(owner, "notes", {"approval": "never"}) == 404


async def test_a_tenant_key_is_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    async with serving(ScriptedModel([]), tmp_path) as served, served.client("alpha") as alpha:
        assert (await alpha.get("/api/mcp/servers")).status_code == 403
        refused = await alpha.put("/api/mcp/servers/notes/approval", json={"approval": "never"})
        assert refused.status_code == 403
    assert path.read_text(encoding="utf-8") == CONFIG
