"""Typed hook points: payloads and changes are dataclasses, changes merge per field."""

from __future__ import annotations

from pathlib import Path

import pytest

import seam
from seam.contracts import hooks as hook_points
from seam.contracts.hooks import (
    AfterToolCall,
    HookNotice,
    SubagentSpawned,
    ToolCallChange,
    ToolResultChange,
)
from seam.core import AgentLoop, DefaultHookRegistry, InMemoryExecutionStore, ScriptedModel
from seam.core.coordinator import Coordinator
from seam.core.session_factory import SessionFactory

RESULT = AfterToolCall("s", "t", 1, "c1", "fetch", {}, "page text", False)


async def test_modifying_changes_merge_first_non_none_per_field() -> None:
    hooks = DefaultHookRegistry()

    async def first(payload: AfterToolCall) -> ToolResultChange:
        return ToolResultChange(result=f"[{payload.result}]")

    async def nothing(payload: AfterToolCall) -> None:
        return None

    async def second(payload: AfterToolCall) -> ToolResultChange:
        return ToolResultChange(result="ignored", notice=HookNotice("k", "m"), halt="stop")

    for handler in (first, nothing, second):
        hooks.on_modifying(hook_points.AFTER_TOOL_RESULT, handler)
    change = await hooks.fire_modifying(hook_points.AFTER_TOOL_RESULT, RESULT)
    assert change == ToolResultChange(
        result="[page text]", halt="stop", notice=HookNotice("k", "m")
    )


async def test_no_handler_means_no_change() -> None:
    hooks = DefaultHookRegistry()
    assert not hooks.has(hook_points.AFTER_TOOL_RESULT)
    assert await hooks.fire_modifying(hook_points.AFTER_TOOL_RESULT, RESULT) is None


def test_a_misspelt_change_field_is_an_error() -> None:
    with pytest.raises(TypeError):
        ToolCallChange(blok="typo")  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        RESULT.reslt  # type: ignore[attr-defined]  # noqa: B018


async def test_subagent_spawned_fires_once_per_child_session() -> None:
    hooks = DefaultHookRegistry()
    seen: list[SubagentSpawned] = []

    async def record(payload: SubagentSpawned) -> None:
        seen.append(payload)

    hooks.on_void(hook_points.SUBAGENT_SPAWNED, record)
    store = InMemoryExecutionStore()
    loop = AgentLoop(model=ScriptedModel([]), hooks=hooks, sessions=store)
    factory = SessionFactory(loop, store, Coordinator(store))
    parent = await factory.get_or_create_root('agent-session:["local","default","main"]')

    child = await factory.create_child(parent, "t1")
    factory.drop(child.key)  # as after a restart: the child is rebuilt, not spawned again
    again = await factory.create_child(parent, "t1")

    assert again.key == child.key
    assert seen == [SubagentSpawned(parent.key, child.key, "default")]


PLUGIN_WITH_TYPOS = """
from seam.contracts import hooks
from seam.contracts.hooks import AfterToolCall, BeforeToolCall, HookRegistry, ToolCallChange


async def guard(payload: BeforeToolCall) -> ToolCallChange | None:
    return ToolCallChange(blok=payload.nme)


async def after(payload: AfterToolCall) -> dict[str, str]:
    return {"result": payload.result}


def register(registry: HookRegistry) -> None:
    registry.on_modifying(hooks.BEFORE_TOOL_CALL, guard)
    registry.on_modifying(hooks.AFTER_TOOL_RESULT, after)
"""


def test_a_plugin_with_misspelt_hook_fields_fails_the_type_check(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    plugin = tmp_path / "plugin.py"
    plugin.write_text(PLUGIN_WITH_TYPOS)
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {Path(seam.__file__).parents[1]}\n")
    flags = ["--strict", "--no-incremental", "--cache-dir=/dev/null"]
    report, _, status = api.run([*flags, "--config-file", str(config), str(plugin)])
    assert status == 1
    assert 'Unexpected keyword argument "blok" for "ToolCallChange"' in report
    assert '"BeforeToolCall" has no attribute "nme"' in report
    # A handler returning the old dict of magic keys no longer fits the hook point.
    assert 'Argument 2 to "on_modifying"' in report
    assert report.count("error:") == 3
