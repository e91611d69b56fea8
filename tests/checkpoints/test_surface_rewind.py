"""Rewind and fork (`SessionRewinder`), over a real runtime whose turns took checkpoints:
the files come back to their state after turn N, the transcript to its first N turns, a
fork copies them into a new session, and bad input changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from seam.contracts.rewind import SessionExists, TurnOutOfRange
from seam.contracts.sessions import SessionNotFound
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from seam.wiring.rewind import rewinder
from tests.checkpoints.surface_support import project, runtime_over, write_turn


async def three_turns(tmp: Path) -> tuple[ScriptedModel, Path]:
    """Turn 1 writes a.txt, turn 2 rewrites notes.txt, turn 3 only talks."""
    root = project(tmp)
    steps = [*write_turn("a.txt", "from turn 1\n"), *write_turn("notes.txt", "turn 2 was here\n")]
    model = ScriptedModel([*steps, text_step("just words")])
    return model, root


async def test_rewind_restores_the_files_and_drops_the_later_turns(tmp_path: Path) -> None:
    model, root = await three_turns(tmp_path)
    async with runtime_over(model, tmp_path, root) as runtime:
        for text in ("one", "two", "three"):
            await runtime.ask("s", text)
        key = runtime.session_key_for("s")
        service = rewinder(runtime)
        plan = await service.plan(key, 1)
        assert [c.path for c in plan.changes] == ["notes.txt"] and not plan.edited
        done = await service.rewind(plan)
        assert (root / "notes.txt").read_text() == "first version\n"
        assert (root / "a.txt").read_text() == "from turn 1\n"
        messages = await runtime.sessions.messages(key)
        assert [m.content for m in messages if m.role == "user"] == ["one"]
        assert done.removed_messages > 0 and len(done.kept) == 1
        model.add(text_step("after the rewind"))
        await runtime.ask("s", "four")
        sent = " ".join(m.content for m in model.requests[-1].messages)
        assert "two" not in sent.split() and "turn 2 was here" not in sent
        assert runtime.checkpoints is not None
        # Turn 2 was taken back by the rewind: undo now takes back turn 1's change.
        undo = await runtime.checkpoints.plan_undo(key)
        assert undo.turn == 1 and [c.path for c in undo.changes] == ["a.txt"]


async def test_rewind_to_zero_takes_every_turn_back(tmp_path: Path) -> None:
    model, root = await three_turns(tmp_path)
    async with runtime_over(model, tmp_path, root) as runtime:
        for text in ("one", "two", "three"):
            await runtime.ask("s", text)
        service = rewinder(runtime)
        plan = await service.plan(runtime.session_key_for("s"), 0)
        await service.rewind(plan)
        assert not (root / "a.txt").exists()
        assert (root / "notes.txt").read_text() == "first version\n"
        assert await runtime.sessions.messages(runtime.session_key_for("s")) == []


async def test_a_user_edit_after_the_turns_is_named_and_kept(tmp_path: Path) -> None:
    model, root = await three_turns(tmp_path)
    async with runtime_over(model, tmp_path, root) as runtime:
        for text in ("one", "two", "three"):
            await runtime.ask("s", text)
        (root / "notes.txt").write_text("my own edit\n")
        service = rewinder(runtime)
        plan = await service.plan(runtime.session_key_for("s"), 1)
        assert plan.edited == ("notes.txt",)
        done = await service.rewind(plan)
        assert (root / "notes.txt").read_text() == "first version\n"
        assert runtime.checkpoints is not None
        engine = runtime.checkpoints.engine  # type: ignore[attr-defined]
        kept = await engine.diff(str(root), done.kept[0])
        assert [c.path for c in kept.changes] == ["notes.txt"]


async def test_fork_copies_the_first_turns_and_leaves_the_files(tmp_path: Path) -> None:
    model, root = await three_turns(tmp_path)
    async with runtime_over(model, tmp_path, root) as runtime:
        for text in ("one", "two", "three"):
            await runtime.ask("s", text)
        key, new = runtime.session_key_for("s"), runtime.session_key_for("s2")
        service = rewinder(runtime)
        made = await service.fork(await service.plan(key, 2, fork=True), new)
        assert (root / "notes.txt").read_text() == "turn 2 was here\n"
        copied = await runtime.sessions.messages(new)
        assert [m.content for m in copied if m.role == "user"] == ["one", "two"]
        assert made.copied_messages == len(copied) and made.restored == ()
        assert len(await runtime.sessions.messages(key)) > len(copied)
        restored = await service.fork(await service.plan(key, 1, fork=True), "x", restore=True)
        assert [c.path for c in restored.restored] == ["notes.txt"]
        assert (root / "notes.txt").read_text() == "first version\n"


async def test_bad_input_changes_nothing(tmp_path: Path) -> None:
    model, root = await three_turns(tmp_path)
    async with runtime_over(model, tmp_path, root) as runtime:
        await runtime.ask("s", "one")
        await runtime.ask("s", "two")
        key = runtime.session_key_for("s")
        before = await runtime.sessions.messages(key)
        service = rewinder(runtime)
        for turn, fork in ((2, False), (-1, False), (0, True), (3, True)):
            with pytest.raises(TurnOutOfRange, match="out of range"):
                await service.plan(key, turn, fork=fork)
        with pytest.raises(SessionNotFound):
            await service.plan(runtime.session_key_for("nobody"), 0)
        with pytest.raises(SessionExists):
            await service.fork(await service.plan(key, 1, fork=True), key)
        assert await runtime.sessions.messages(key) == before
        assert (root / "notes.txt").read_text() == "turn 2 was here\n"
