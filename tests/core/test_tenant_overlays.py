"""What a session's tenant gets: its own memory and its overrides of a personality, and
never more than an override may change (files on disk, read as the runtime reads them)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from seam.contracts.hooks import AgentDone
from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import Message, Usage
from seam.contracts.personality import Personality
from seam.core.identity import create_session_storage_key, create_task_session_name
from seam.core.memory import NoopMemory, TenantMemories, memory_for_session
from seam.core.personalities import TenantPersonalities
from seam.core.scripted_model import ScriptedModel, text_step
from seam.core.tenant_cache import TenantCache, session_tenant
from seam.plugins.hooks.reflection import ReflectionHook
from seam.plugins.memory.markdown import MarkdownMemory
from seam.wiring.memory import build_memory
from seam.wiring.settings import Settings, load_settings
from seam.wiring.tenant_dirs import personality_overlay

OWNER = Personality(
    id="default",
    soul="owner soul",
    name="Seam",
    model="openai:gpt-4o-mini",
    toolset=("read_file",),
    fs_read=("/srv",),
    fs_write=(),
    approval_mode="manual",
    network=False,
)


def key(tenant: str, name: str = "s") -> str:
    return create_session_storage_key(tenant, "default", name)


def settings_in(tmp: Path) -> Settings:
    return load_settings({"HOME": str(tmp)}, home=tmp / "home", working_dir=tmp)


def override(settings: Settings, tenant: str, soul: str | None, config: str | None) -> Path:
    folder = settings.home / "tenants" / tenant / "personalities" / "default"
    folder.mkdir(parents=True, exist_ok=True)
    if soul is not None:
        (folder / "SOUL.md").write_text(soul, "utf-8")
    if config is not None:
        (folder / "config.toml").write_text(config, "utf-8")
    return folder


def test_a_session_key_names_its_tenant_and_a_subagent_follows_its_parent() -> None:
    assert session_tenant(key("local"), "local") is None
    assert session_tenant(key("alpha"), "local") == "alpha"
    task = key("alpha", create_task_session_name("s", "t1"))
    assert session_tenant(task, "local") == "alpha"
    for not_a_session in ("listing", "doctor", "agent-session:nonsense"):
        assert session_tenant(not_a_session, "local") is None


def test_the_tenant_cache_builds_once_and_keeps_the_most_recent() -> None:
    built: list[str] = []

    def build(tenant: str) -> str:
        built.append(tenant)
        return tenant.upper()

    cache: TenantCache[str] = TenantCache(build, size=2)
    assert [cache.get(t) for t in ("a", "b", "a", "c", "a", "b")] == list("ABACAB")
    assert built == ["a", "b", "c", "b"]


def test_an_override_changes_only_what_a_tenant_may_change() -> None:
    loose = {
        "soul": "alpha soul",
        "name": "Alpha",
        "approval_mode": "off",
        "network": True,
        "toolset": None,
        "fs_write": ("/",),
    }
    overlay = TenantPersonalities("local", lambda tenant, pid: loose if tenant == "alpha" else None)
    assert overlay(key("local"), OWNER) is OWNER
    assert overlay(key("beta"), OWNER) is OWNER
    seen = overlay(key("alpha"), OWNER)
    assert (seen.soul, seen.name) == ("alpha soul", "Alpha")
    assert (seen.approval_mode, seen.network, seen.toolset) == ("manual", False, ("read_file",))
    assert (seen.fs_read, seen.fs_write, seen.model) == (("/srv",), (), "openai:gpt-4o-mini")


def test_override_files_are_read_as_the_tenant_left_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_in(tmp_path)
    overlay = personality_overlay(settings)
    assert overlay(key("alpha"), OWNER) is OWNER  # no override yet
    folder = override(settings, "alpha", "alpha soul", 'name = "Alpha"\nfallback = ["local"]\n')
    seen = overlay(key("alpha"), OWNER)
    assert (seen.soul, seen.name, seen.fallback, seen.model) == (
        "alpha soul",
        "Alpha",
        ("local",),
        "openai:gpt-4o-mini",
    )
    # A hand edit with owner-only keys: they are ignored (and logged), never taken.
    (folder / "config.toml").write_text('approval_mode = "off"\nnetwork = true\n', "utf-8")
    with caplog.at_level(logging.WARNING):
        seen = overlay(key("alpha"), OWNER)
    assert (seen.soul, seen.approval_mode, seen.network) == ("alpha soul", "manual", False)
    assert "only the owner" in caplog.text
    # A broken one, or one naming a file as its model: the owner's personality, logged.
    for broken in ("name = ", 'model = "local:/etc/passwd"', "name = 3"):
        (folder / "config.toml").write_text(broken + "\n", "utf-8")
        assert overlay(key("alpha"), OWNER) is OWNER, broken
    # A name that would leave the tenants' folder has no overrides.
    assert overlay(key(".."), OWNER) is OWNER


async def test_each_tenant_remembers_apart_and_the_owner_as_before(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    owner = build_memory(settings)
    owner.add("user", "OWNER-MEMORY.")
    alpha = memory_for_session(owner, key("alpha"))
    assert isinstance(alpha, MarkdownMemory) and alpha is not owner
    assert alpha.folder == (settings.home / "tenants" / "alpha" / "memory").resolve()
    assert memory_for_session(owner, key("alpha", "other")) is alpha  # built once
    assert memory_for_session(owner, key("local")) is owner
    alpha.add("user", "ALPHA-MEMORY.")
    assert "ALPHA-MEMORY." in (await owner.prefetch(key("alpha")) or "")
    assert "OWNER-MEMORY." not in (await owner.prefetch(key("alpha")) or "")
    assert await owner.prefetch(key("beta")) is None
    assert "OWNER-MEMORY." in (await owner.prefetch(key("local")) or "")
    await owner.sync(key("alpha"), [Message("user", "hi")])
    assert isinstance(memory_for_session(owner, key("..")), NoopMemory)
    assert owner.entries("user") == ["OWNER-MEMORY."]


async def test_reflection_on_a_tenants_turn_writes_the_tenants_memory(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    owner = build_memory(settings)
    model = ScriptedModel([text_step("user: Alpha sails on weekends.")])
    hook = ReflectionHook(model, owner)
    alpha = memory_for_session(owner, key("alpha"))
    assert isinstance(alpha, MarkdownMemory)
    said = (Message("user", "I sail"), Message("assistant", "Nice."))
    await hook.after_turn(AgentDone(key("alpha"), "t1", "Nice.", Usage(), said))
    await hook.drain()
    assert alpha.entries("user") == ["Alpha sails on weekends."]
    assert owner.entries("user") == []


def test_a_memory_that_keeps_no_tenants_serves_every_session() -> None:
    shared: MemoryProvider = NoopMemory()
    assert memory_for_session(shared, key("alpha")) is shared
    router = TenantMemories("local", lambda tenant: NoopMemory())
    assert router(key("local")) is None and router("listing") is None
    assert router(key("alpha")) is router(key("alpha"))
