"""The turn hook with the scripted model, the real tools, engine and guard: one checkpoint
before a turn's first change (recorded before the tool runs), one after it, none for a
turn that only reads; and the undo service over what it recorded."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from seam.contracts.checkpoints import NothingToUndo, TurnCheckpoint
from seam.contracts.hooks import BEFORE_TOOL_CALL, BeforeToolCall, ToolCallChange
from seam.core import DefaultHookRegistry, ScriptedModel, call, text_step, tool_step
from seam.core.scripted_model import Step
from seam.plugins.checkpoints.turns import TurnCheckpoints
from seam.plugins.checkpoints.undo import UndoService
from seam.services.checkpoints import ShadowCheckpoints
from seam.services.sandbox.local import LocalSandboxProvider
from seam.services.storage.fs import FsStorage
from seam.wiring.assembly import assemble_runtime
from seam.wiring.guard import build_guardrail
from seam.wiring.runtime import Runtime
from seam.wiring.settings import Settings


@dataclass
class Rig:
    runtime: Runtime
    project: Path
    model: ScriptedModel
    service: UndoService
    seen: list[tuple[str, list[TurnCheckpoint]]]

    async def turn(self, text: str, *steps: Step) -> None:
        self.model.add(*steps)
        await self.runtime.ask("s", text)

    async def rows(self) -> list[TurnCheckpoint]:
        return await self.runtime.store.checkpoints(self.runtime.session_key_for("s"))  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("first\n")
    hooks = DefaultHookRegistry()
    model = ScriptedModel([])
    runtime = assemble_runtime(
        model=model,
        hooks=hooks,
        storage=FsStorage(),
        sandboxes=LocalSandboxProvider(base_env=dict(os.environ)),
        working_dir=str(project),
    )
    seen: list[tuple[str, list[TurnCheckpoint]]] = []

    async def watch(call: BeforeToolCall) -> ToolCallChange | None:
        # Registered after the checkpoint hook: what the log holds as the tool starts.
        seen.append((call.name, await runtime.store.checkpoints(call.session_key)))  # type: ignore[attr-defined]
        return None

    engine = ShadowCheckpoints(tmp_path / "checkpoints", base_env=dict(os.environ))
    guard = build_guardrail(Settings(home=tmp_path / "seam", working_dir=project))
    store = runtime.store
    TurnCheckpoints(engine, store, store, runtime.loop.working_dir_for, guard).register(hooks)  # type: ignore[arg-type]
    hooks.on_modifying(BEFORE_TOOL_CALL, watch)
    service = UndoService(engine, store, store)  # type: ignore[arg-type]
    async with runtime:
        yield Rig(runtime, project, model, service, seen)


def write(path: str, content: str) -> Step:
    return tool_step(call("write_file", {"path": path, "content": content}))


def shell(command: str) -> Step:
    return tool_step(call("terminal", {"command": command}))


async def test_one_checkpoint_before_the_first_change_and_one_after(rig: Rig) -> None:
    await rig.turn("change", write("a.txt", "a\n"), write("b.txt", "b\n"), text_step("ok"))
    [row] = await rig.rows()
    assert row.after is not None and row.before != row.after
    # The row was in the log before the first write ran (intent first).
    assert [(name, len(rows)) for name, rows in rig.seen] == [("write_file", 1)] * 2
    assert rig.seen[0][1][0].after is None


async def test_a_turn_that_only_reads_costs_nothing(rig: Rig, tmp_path: Path) -> None:
    await rig.turn(
        "look",
        tool_step(call("read_file", {"path": "notes.txt"}), call("list_dir", {"path": "."})),
        shell("cat notes.txt | wc -l"),
        text_step("seen"),
    )
    assert await rig.rows() == []
    assert not (tmp_path / "checkpoints").exists()
    with pytest.raises(NothingToUndo):
        await rig.service.plan_undo(rig.runtime.session_key_for("s"))


async def test_a_shell_change_is_checkpointed_and_undone(rig: Rig) -> None:
    await rig.turn("hello", text_step("hi"))
    await rig.turn("append", shell("echo more >> notes.txt && touch made.txt"), text_step("ok"))
    key = rig.runtime.session_key_for("s")
    shown = await rig.service.changes(key)
    assert shown is not None and shown.turn == 2
    assert {c.path for c in shown.diff.changes} == {"notes.txt", "made.txt"}
    assert "+more" in shown.diff.text
    plan = await rig.service.plan_undo(key)
    assert (plan.turn, plan.edited) == (2, ())
    done = await rig.service.undo(plan)
    assert done.removed_messages == 4  # the user message, the call, its result, the answer
    assert (rig.project / "notes.txt").read_text() == "first\n"
    assert not (rig.project / "made.txt").exists()
    assert [m.content for m in await rig.runtime.store.messages(key)] == ["hello", "hi"]
    with pytest.raises(NothingToUndo):
        await rig.service.plan_undo(key)


async def test_undo_goes_back_one_changing_turn_at_a_time(rig: Rig) -> None:
    await rig.turn("one", write("notes.txt", "second\n"), text_step("ok"))
    await rig.turn("chat", text_step("just talk"))
    await rig.turn("two", write("notes.txt", "third\n"), text_step("ok"))
    key = rig.runtime.session_key_for("s")
    await rig.service.undo(await rig.service.plan_undo(key))
    assert (rig.project / "notes.txt").read_text() == "second\n"
    plan = await rig.service.plan_undo(key)
    assert plan.turn == 1
    done = await rig.service.undo(plan)  # drops turn 1 and the talk after it
    assert done.removed_messages == 6
    assert (rig.project / "notes.txt").read_text() == "first\n"
    assert await rig.runtime.store.messages(key) == []


async def test_an_edit_after_the_turn_is_reported(rig: Rig) -> None:
    await rig.turn("one", write("notes.txt", "agent\n"), write("other.txt", "x"), text_step("ok"))
    (rig.project / "notes.txt").write_text("person\n")
    plan = await rig.service.plan_undo(rig.runtime.session_key_for("s"))
    assert plan.edited == ("notes.txt",)


async def test_a_checkpoint_that_fails_never_blocks_the_change(tmp_path: Path) -> None:
    from seam.contracts.checkpoints import CheckpointSettings
    from seam.core.execution import InMemoryExecutionStore

    project = tmp_path / "big"
    project.mkdir()
    for n in range(3):
        (project / f"f{n}").write_text("x")
    store = InMemoryExecutionStore()
    await store.create("s")
    engine = ShadowCheckpoints(
        tmp_path / "checkpoints", CheckpointSettings(max_files=2), base_env=dict(os.environ)
    )
    hook = TurnCheckpoints(engine, store, store, lambda _key: str(project))
    call_ = BeforeToolCall("s", "t1", 1, "c1", "write_file", {"path": "a", "content": "b"})
    change = await hook.before_tool_call(call_)
    assert change is not None and change.block is None and change.notice is not None
    assert "cannot be undone" in change.notice.message
    assert await store.checkpoints("s") == []
