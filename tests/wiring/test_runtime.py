"""The composition root wires real backends from settings, and nothing from globals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from seam.contracts import Done, ToolEnd
from seam.core import (
    ScriptedModel,
    call,
    text_step,
    tool_step,
)
from seam.core.identity import InvalidSessionName
from seam.wiring import assemble_runtime, create_runtime
from seam.wiring.models import build_model
from seam.wiring.settings import ConfigError, load_settings


async def collect(runtime, session, text):  # type: ignore[no-untyped-def]
    return [e async for e in runtime.run(session, text)]


async def test_in_memory_runtime_needs_only_a_model(tmp_path: Path) -> None:
    runtime = assemble_runtime(model=ScriptedModel([text_step("hi")]))
    events = await collect(runtime, "s1", "hello")
    assert events[-1].text == "hi"
    assert runtime.settings is None
    assert not (Path(os.environ["SEAM_HOME"])).exists()
    await runtime.aclose()


async def test_settings_runtime_uses_files_sqlite_and_the_working_dir(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "note.txt").write_text("remember the milk", encoding="utf-8")
    home = tmp_path / "home"
    settings = load_settings({}, home=home, working_dir=project)
    model = ScriptedModel(
        [
            tool_step(call("read_file", path="note.txt")),
            lambda req: text_step("Note: " + req.messages[-1].content),
        ]
    )
    runtime = create_runtime(settings=settings, model=model)
    events = await collect(runtime, "demo", "what's in note.txt?")
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert "remember the milk" in end.result and not end.is_error
    assert isinstance(events[-1], Done) and "remember the milk" in events[-1].text
    assert (home / "personalities" / "default" / "SOUL.md").is_file()
    assert (home / "sessions.db").is_file()
    await runtime.aclose()

    # A new process (a new runtime over the same home) sees the stored transcript.
    again = create_runtime(settings=settings, model=ScriptedModel([text_step("ok")]))
    key = again.session_key_for("demo")
    assert key == 'agent-session:["local","default","demo"]'
    stored = await again.sessions.messages(key)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    await again.aclose()


async def test_soul_md_edits_show_in_the_next_turn(tmp_path: Path) -> None:
    settings = load_settings({}, home=tmp_path / "home", working_dir=tmp_path)
    model = ScriptedModel([text_step("1"), text_step("2")])
    runtime = create_runtime(settings=settings, model=model)
    await collect(runtime, "s", "one")
    soul = settings.personalities_dir / "default" / "SOUL.md"
    soul.write_text("You are a pirate.", encoding="utf-8")
    stat = soul.stat()
    os.utime(soul, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    await collect(runtime, "s", "two")
    assert "pirate" not in model.requests[0].system
    # SOUL.md opens the prompt; tool guidance follows it (see core/context.py).
    assert model.requests[1].system.startswith("You are a pirate.\n\n## Using tools\n")
    await runtime.aclose()


async def test_the_agent_cannot_touch_its_own_session_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load_settings({}, home=home, working_dir=home)
    model = ScriptedModel([tool_step(call("read_file", path="sessions.db")), text_step("x")])
    runtime = create_runtime(settings=settings, model=model)
    events = await collect(runtime, "s", "read it")
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.is_error and "always denied" in end.result
    await runtime.aclose()


def test_reserved_session_names_are_rejected() -> None:
    runtime = assemble_runtime(model=ScriptedModel([]))
    with pytest.raises(InvalidSessionName, match="reserved"):
        runtime.run("task:parent:1", "hi")


def test_openai_without_key_or_url_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[model]\nprovider = "openai"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_model(load_settings({}, home=tmp_path))


def test_openai_compatible_endpoint_is_built_from_env(tmp_path: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "SEAM_MODEL": "llama3"}
    model = build_model(load_settings(env, home=tmp_path))
    assert (model.name, model.model) == ("openai", "llama3")


async def test_memory_written_in_one_session_is_in_the_next_ones_prompt(tmp_path: Path) -> None:
    settings = load_settings({}, home=tmp_path / "home", working_dir=tmp_path)
    remember = call("memory", action="add", target="user", content="Prefers metric units.")
    model = ScriptedModel([tool_step(remember), text_step("Noted."), text_step("Hi.")])
    runtime = create_runtime(settings=settings, model=model)
    events = [e async for e in runtime.run("a", "I use metric, remember that")]
    assert not next(e for e in events if isinstance(e, ToolEnd)).is_error
    await collect(runtime, "b", "hello")
    assert "metric" not in model.requests[1].system  # same session: the prompt is frozen
    assert "Prefers metric units." in model.requests[2].system
    assert (tmp_path / "home" / "memory" / "USER.md").is_file()
    await runtime.aclose()


async def test_a_queued_submission_can_be_aborted_through_the_runtime() -> None:
    model = ScriptedModel([text_step("never sent")])
    async with assemble_runtime(model=model) as runtime:
        queued = await runtime.submit("s", "never mind")
        aborted = await runtime.abort(queued.id)
        assert await runtime.drain_runnable() == []
    assert (aborted.state, aborted.outcome) == ("settled", "aborted")
    assert model.requests == []
