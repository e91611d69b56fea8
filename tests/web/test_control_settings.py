"""The Settings section's API over a real server: the effective configuration read fresh
with each value's source and every secret masked, edits written back into config.toml
with its comments kept (all or nothing), the schema, and seam doctor's checks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from seam.apps.web.control.settings_mask import MASK
from seam.apps.web.control.settings_write import patched
from seam.core import ScriptedModel
from seam.wiring.settings import load_settings
from tests.web.harness import serving

OPENAI_KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123456789"
DB_PASSWORD = "hunter2-correct-horse"
BOT_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"
BEARER = "Bearer tok_live_zyxwvutsrqponmlk9876543210"
CONFIG = f"""# My agent's settings: keep this note.
[agent]
# How many model calls one turn may make.
max_iterations = 10  # raised for long jobs
personality = "default"

[store]
url = "postgresql://seam:{DB_PASSWORD}@db.example/seam"

[mcp.servers.github]
command = ["github-mcp"]
env = {{ GITHUB_TOKEN = "{BOT_TOKEN}" }}

[mcp.servers.remote]
url = "https://mcp.example/api"
headers = {{ Authorization = "{BEARER}", Accept = "text/plain" }}
"""
ENV = {"OPENAI_API_KEY": OPENAI_KEY, "SEAM_MODEL": "gpt-test-model"}


def error_of(response: httpx.Response) -> str:
    message: str = response.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    return message


def home_of(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    return home


async def values_of(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/api/settings")
    assert response.status_code == 200, response.text
    values: dict[str, Any] = response.json()["values"]
    return values


async def test_secrets_never_leave_and_every_value_says_where_it_came_from(
    tmp_path: Path,
) -> None:
    home = home_of(tmp_path)
    async with serving(ScriptedModel([]), tmp_path, env=ENV) as served, served.client() as c:
        response = await c.get("/api/settings")
        text = response.text
        for secret in (OPENAI_KEY, DB_PASSWORD, BOT_TOKEN, BEARER, "tok_live_zyxw"):
            assert secret not in text, secret
        body = response.json()
        assert body["path"] == str(home / "config.toml") and body["exists"] is True
        values = body["values"]
        assert values["agent.max_iterations"]["value"] == 10
        assert values["agent.max_iterations"]["source"] == "file"
        assert values["agent.turn_timeout"] == {
            "value": 1800.0,
            "source": "default",
            "kind": "scalar",
            "masked": False,
            "editable": True,
        }
        model = values["model.model"]
        assert (model["value"], model["source"], model["variable"]) == (
            "gpt-test-model",
            "environment",
            "SEAM_MODEL",
        )
        assert model["editable"] is False
        store = values["store.url"]
        assert store["value"] == f"postgresql://seam:{MASK}@db.example/seam"
        assert store["masked"] is True and store["source"] == "file"
        servers = values["mcp.servers"]
        assert servers["kind"] == "table" and servers["editable"] is False
        assert servers["value"]["github"]["env"] == {"GITHUB_TOKEN": MASK}
        headers = servers["value"]["remote"]["headers"]
        assert headers == {"Authorization": MASK, "Accept": "text/plain"}
        keys = {k["variable"]: k for k in body["keys"]}
        assert keys["OPENAI_API_KEY"]["set"] is True and keys["OPENAI_API_KEY"]["value"] == MASK
        assert keys["ANTHROPIC_API_KEY"]["set"] is False
        assert "restart" in body["restart"]


async def test_a_saved_value_keeps_the_files_comments_and_seam_reads_it(tmp_path: Path) -> None:
    home = home_of(tmp_path)
    async with serving(ScriptedModel([]), tmp_path, env=ENV) as served, served.client() as c:
        patch = {"agent.max_iterations": 40, "sandbox.timeout": 90, "context.files": ["A.md"]}
        saved = await c.patch("/api/settings", json={"values": patch})
        assert saved.status_code == 200, saved.text
        assert saved.json()["written"] == sorted(patch)
        assert "restart" in saved.json()["restart"]
        text = (home / "config.toml").read_text(encoding="utf-8")
        for kept in (
            "# My agent's settings: keep this note.",
            "# How many model calls one turn may make.",
            "max_iterations = 40  # raised for long jobs",
            f"postgresql://seam:{DB_PASSWORD}@db.example/seam",  # the real secret stays
            f'GITHUB_TOKEN = "{BOT_TOKEN}"',
        ):
            assert kept in text, kept
        assert text.index("[agent]") < text.index("[store]") < text.index("[mcp.servers.github]")
        settings = load_settings({}, home=home)
        assert settings.config.agent.max_iterations == 40
        assert settings.config.sandbox.timeout == 90.0
        assert settings.config.context.files == ["A.md"]
        values = await values_of(c)
        assert values["sandbox.timeout"]["source"] == "file"
        # null: back to the default, the key gone from the file
        reset = await c.patch("/api/settings", json={"values": {"sandbox.timeout": None}})
        assert reset.status_code == 200
        assert (await values_of(c))["sandbox.timeout"]["source"] == "default"
        assert "timeout" not in (home / "config.toml").read_text().split("[sandbox]")[1]


async def test_a_bad_value_is_refused_naming_its_key_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    home = home_of(tmp_path)
    before = (home / "config.toml").read_bytes()
    bad: list[tuple[dict[str, Any], str]] = [
        ({"agent.max_iterations": 0}, "agent.max_iterations"),
        ({"agent.max_iterations": "many"}, "agent.max_iterations"),
        ({"agent.max_iterations": True}, "agent.max_iterations"),
        ({"agent.max_iterations": 5, "model.provider": "nope"}, "model.provider"),
        ({"context.files": "AGENTS.md"}, "context.files"),
        ({"agent.nope": 1}, "agent.nope"),
        ({"guard": {}}, "guard"),
        ({"mcp.servers": {}}, "mcp.servers"),
        ({"store.url": f"postgresql://seam:{MASK}@db.example/seam"}, "store.url"),
        ({"model.model": "other"}, "SEAM_MODEL"),  # the environment sets it
        ({"sessions.idle_end": "soon"}, "sessions.idle_end"),
    ]
    async with serving(ScriptedModel([]), tmp_path, env=ENV) as served, served.client() as c:
        for values, named in bad:
            response = await c.patch("/api/settings", json={"values": values})
            assert response.status_code == 400, (values, response.text)
            assert named in error_of(response), values
            assert (home / "config.toml").read_bytes() == before
        empty = await c.patch("/api/settings", json={"values": {}})
        assert empty.status_code == 400
        assert (await c.patch("/api/settings", json={"other": 1})).status_code == 422
    assert sorted(p.name for p in home.iterdir()) == ["config.toml"]  # no temp file left


async def test_edits_made_outside_show_at_once_and_a_broken_file_is_one_line(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as c:
        assert (await values_of(c))["agent.max_iterations"]["source"] == "default"
        (home / "config.toml").write_text("[agent]\nmax_iterations = 7\n", encoding="utf-8")
        assert (await values_of(c))["agent.max_iterations"]["value"] == 7
        saved = await c.patch("/api/settings", json={"values": {"reflection.enabled": True}})
        assert saved.status_code == 200
        (home / "config.toml").write_text("[agent\n", encoding="utf-8")
        broken = await c.get("/api/settings")
        assert broken.status_code == 409 and "config.toml" in error_of(broken)
        refused = await c.patch("/api/settings", json={"values": {"agent.max_iterations": 3}})
        assert refused.status_code == 409
        assert (home / "config.toml").read_text() == "[agent\n"


async def test_the_schema_is_the_config_files_own(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as c:
        schema = (await c.get("/api/settings/schema")).json()
        assert schema["additionalProperties"] is False
        agent = schema["$defs"]["AgentSection"]["properties"]["max_iterations"]
        assert agent["exclusiveMinimum"] == 0 and agent["type"] == "integer"


async def test_doctor_runs_the_checks_for_this_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as c:
        (home / "config.toml").write_text("[agent]\nmax_iterations = 7\n", encoding="utf-8")
        response = await c.post("/api/doctor")
        assert response.status_code == 200, response.text
        checks = {check["name"]: check for check in response.json()["checks"]}
        assert checks["SEAM_HOME"]["status"] == "ok" and str(home) in checks["SEAM_HOME"]["detail"]
        assert checks["config"] == {
            "name": "config",
            "status": "ok",
            "detail": str(home / "config.toml"),
            "hint": "",
        }
        (home / "config.toml").write_text("[agent]\nmax_iterations = 0\n", encoding="utf-8")
        bad = (await c.post("/api/doctor")).json()
        assert bad["config_ok"] is False and bad["ok"] is False
        assert "max_iterations" in bad["checks"][-1]["detail"]
        # one run at a time: a second one while the first runs is refused, not queued
        both = await asyncio.gather(c.post("/api/doctor"), c.post("/api/doctor"))
        assert sorted(r.status_code for r in both) in ([200, 200], [200, 409])


async def test_only_the_owner_reaches_settings_and_doctor(tmp_path: Path) -> None:
    home_of(tmp_path)
    async with (
        serving(ScriptedModel([]), tmp_path, env=ENV) as served,
        served.client("alpha") as alpha,
    ):
        for method, path in [
            ("GET", "/api/settings"),
            ("GET", "/api/settings/schema"),
            ("PATCH", "/api/settings"),
            ("POST", "/api/doctor"),
        ]:
            response = await alpha.request(method, path, json={"values": {"a.b": 1}})
            assert response.status_code == 403, path
            assert OPENAI_KEY not in response.text


def test_dotted_keys_inline_tables_and_new_sections_are_edited_in_place() -> None:
    text = (
        "# head\n"
        "agent.max_iterations = 3 # dotted\n"
        'model = { provider = "auto" }  # inline\n'
        "\n[sandbox] # s\ntimeout = 10\n"
    )
    values = {
        "agent.max_iterations": 5,
        "model.model": "x",
        "sandbox.memory_mb": 7,
        "reflection.enabled": True,
    }
    new = patched(text, values)
    assert new.startswith("# head\nagent.max_iterations = 5 # dotted\n")
    assert "# inline" in new and "[sandbox] # s\ntimeout = 10\nmemory_mb = 7\n" in new
    assert new.endswith("[reflection]\nenabled = true\n")
