"""The dashboard's Personalities routes on a real server: the settings form's JSON Schema is
the pydantic model of config.toml (whose keys are the loader's), an edit is written back
keeping the file's comments, a bad value is a 400 naming the field with nothing written,
and a tenant edits only its own override and never a safety setting."""

from __future__ import annotations

import tomllib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from seam.apps.web.app import PersonalityFiles
from seam.apps.web.control.personality_settings import (
    SOUL_LIMIT,
    PersonalitySettings,
    current_values,
    merged,
)
from seam.core.scripted_model import ScriptedModel
from seam.plugins.personalities.files import (
    CONFIG_KEYS,
    REACH_KEYS,
    FilePersonalityRegistry,
    write_default_personality,
)
from seam.plugins.personalities.tenant import TENANT_KEYS
from tests.web.harness import Served, serving


@asynccontextmanager
async def with_personalities(tmp: Path) -> AsyncIterator[Served]:
    """A server whose personalities are files in tmp/"p" (the default one seeded)."""
    write_default_personality(str(tmp / "p"))
    async with serving(ScriptedModel([]), tmp) as served:
        runtime = served.backend.runtime
        runtime.personalities = FilePersonalityRegistry(str(tmp / "p"))
        runtime.loop.personalities = runtime.personalities
        served.backend.personalities_dir = tmp / "p"
        yield served


def test_the_form_model_knows_the_keys_the_loader_knows() -> None:
    fields = PersonalitySettings.model_fields
    assert set(fields) == set(CONFIG_KEYS)
    reach = fields["fs_reach"].annotation
    assert reach is not None
    assert tuple(reach.__args__[0].model_fields) == REACH_KEYS
    assert PersonalityFiles.model_fields["soul"].metadata[-1].max_length == SOUL_LIMIT


def test_a_merge_keeps_comments_and_removes_what_is_set_to_null() -> None:
    text = '# mine\nname = "A"  # shown\nnetwork = true\n\n[fs_reach]\n# where\nread = ["."]\n'
    edit = PersonalitySettings.model_validate(
        {"name": "B", "network": None, "fs_reach": {"write": ["out"]}}
    )
    out = merged(text, edit)
    assert "# mine" in out and "# shown" in out and "# where" in out
    assert current_values(out) == {"name": "B", "fs_reach": {"read": ["."], "write": ["out"]}}


async def test_settings_show_the_schema_values_and_limits(tmp_path: Path) -> None:
    async with with_personalities(tmp_path) as served, served.client() as owner:
        answer = (await owner.get("/api/personalities/default/settings")).json()
        assert set(answer["schema"]["properties"]) == set(CONFIG_KEYS)
        assert answer["values"]["name"] == "Seam"
        assert "terminal" in answer["values"]["toolset"]
        assert answer["effective"]["approval_mode"] == "manual"
        assert answer["editable"] == list(answer["schema"]["properties"])
        soul = (tmp_path / "p" / "default" / "SOUL.md").read_text(encoding="utf-8")
        assert answer["soul"] == {"chars": len(soul), "limit": SOUL_LIMIT}
        missing = await owner.get("/api/personalities/nobody/settings")
        assert missing.status_code == 404


async def test_an_edit_lands_in_config_toml_with_its_comments(tmp_path: Path) -> None:
    async with with_personalities(tmp_path) as served, served.client() as owner:
        edit = {"model": "openai:gpt-4o", "approval_mode": "smart", "network": True}
        put = await owner.put("/api/personalities/default/settings", json={"values": edit})
        assert put.status_code == 200, put.text
        text = (tmp_path / "p" / "default" / "config.toml").read_text(encoding="utf-8")
        assert "# The default personality." in text and "# Where its file tools" in text
        config = tomllib.loads(text)
        assert (config["model"], config["approval_mode"], config["network"]) == (
            "openai:gpt-4o",
            "smart",
            True,
        )
        assert put.json()["effective"]["approval_mode"] == "smart"
        # The loader (what the next turn uses) sees it at once.
        loaded = served.backend.runtime.personalities.get("default")
        assert (loaded.model, loaded.network) == ("openai:gpt-4o", True)
        cleared = {"values": {"model": None}}
        assert (await owner.put("/api/personalities/default/settings", json=cleared)).is_success
        assert "model" not in tomllib.loads(
            (tmp_path / "p" / "default" / "config.toml").read_text(encoding="utf-8")
        )


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"approval_mode": "sometimes"}, "approval_mode"),
        ({"network": "yes"}, "network"),
        ({"toolset": ["terminal", ""]}, "toolset.1"),
        ({"fs_reach": {"read": "."}}, "fs_reach.read"),
        ({"fs_reach": {"exec": ["."]}}, "fs_reach.exec"),
        ({"colour": "red"}, "colour"),
        ({"name": 7}, "name"),
    ],
)
async def test_a_bad_value_is_a_400_naming_the_field_and_nothing_is_written(
    tmp_path: Path, values: dict[str, object], field: str
) -> None:
    async with with_personalities(tmp_path) as served, served.client() as owner:
        config = tmp_path / "p" / "default" / "config.toml"
        before = config.read_bytes()
        put = await owner.put("/api/personalities/default/settings", json={"values": values})
        assert put.status_code == 400, put.text
        message = put.json()["error"]["message"]
        assert message.startswith(f"{field}: ") and "\n" not in message
        assert config.read_bytes() == before


async def test_a_tenant_sets_only_its_own_override_never_a_safety_setting(
    tmp_path: Path,
) -> None:
    async with with_personalities(tmp_path) as served:
        owner_config = (tmp_path / "p" / "default" / "config.toml").read_bytes()
        async with served.client("alpha") as alpha:
            seen = (await alpha.get("/api/personalities/default/settings")).json()
            assert seen["values"] == {} and seen["tenant"] == "alpha"
            assert set(seen["editable"]) == set(TENANT_KEYS)
            for values in ({"approval_mode": "off"}, {"network": True}, {"toolset": []}):
                refused = await alpha.put(
                    "/api/personalities/default/settings", json={"values": values}
                )
                assert refused.status_code == 403, refused.text
                assert next(iter(values)) in refused.json()["error"]["message"]
            local = {"values": {"model": "local:/etc/passwd"}}
            assert (
                await alpha.put("/api/personalities/default/settings", json=local)
            ).status_code == 403
            put = await alpha.put(
                "/api/personalities/default/settings", json={"values": {"name": "Alpha's"}}
            )
            assert put.status_code == 200, put.text
            assert put.json()["values"] == {"name": "Alpha's"}
        override = tmp_path / "tenants" / "alpha" / "personalities" / "default"
        assert tomllib.loads((override / "config.toml").read_text()) == {"name": "Alpha's"}
        assert not (override / "SOUL.md").exists()  # the owner's soul stays its soul
        assert (tmp_path / "p" / "default" / "config.toml").read_bytes() == owner_config
        async with served.client("beta") as beta:
            assert (await beta.get("/api/personalities/default/settings")).json()["values"] == {}
        async with served.client("local") as owner:
            assert (await owner.get("/api/personalities/default/settings")).json()["values"][
                "name"
            ] == "Seam"
