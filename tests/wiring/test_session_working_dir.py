"""A session's own working directory (`Runtime.set_working_dir`): its tools, and its
subagents' tools, work there; other sessions keep the runtime's."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seam.contracts.tools import ToolContext
from seam.core import ScriptedModel, call, text_step, tool_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.services.storage.fs import FsStorage
from seam.wiring import Runtime, assemble_runtime
from seam.wiring.tools import build_tool_registry


class Where:
    """Records where each call ran."""

    name = "where"
    description = "Say where you are."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = False
    idempotent = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        self.seen.append((ctx.session_key, ctx.working_dir))
        return ctx.working_dir


async def test_tools_and_subagents_work_in_the_sessions_own_directory() -> None:
    where = Where()
    model = ScriptedModel(
        [
            tool_step(call("delegate_task", task="where are you?")),  # session a
            tool_step(call("where")),  # its subagent
            text_step("child done"),
            tool_step(call("where")),  # session a again
            text_step("a done"),
            tool_step(call("where")),  # session b
            text_step("b done"),
        ]
    )
    runtime = assemble_runtime(
        model=model, tools=build_tool_registry([where]), working_dir="/start"
    )
    async with runtime:
        await runtime.set_working_dir("a", "/projects/a")
        assert (await runtime.ask("a", "go")).result == "a done"
        assert (await runtime.ask("b", "go")).result == "b done"
        await runtime.set_working_dir("a", None)
    a, b = runtime.session_key_for("a"), runtime.session_key_for("b")
    [(child, child_dir), *rest] = where.seen
    assert (
        child.startswith('agent-session:["local","default","task:a:') and child_dir == "/projects/a"
    )
    assert rest == [(a, "/projects/a"), (b, "/start")]
    assert runtime.loop.working_dir_for(a) == "/start"


def _runtime(db: Path, model: ScriptedModel, where: Where, cwd: Path) -> Runtime:
    """A runtime over the session file `db` and the real filesystem, working in `cwd`."""
    return assemble_runtime(
        model=model,
        tools=build_tool_registry([where]),
        store=SQLiteSessionStore(str(db)),
        storage=FsStorage(),
        working_dir=str(cwd),
    )


async def test_the_directory_is_stored_with_the_session_and_its_subagents() -> None:
    model = ScriptedModel(
        [tool_step(call("delegate_task", task="t")), text_step("c"), text_step("a")]
    )
    runtime = assemble_runtime(model=model, working_dir="/start")
    async with runtime:
        await runtime.set_working_dir("early", "/projects/early")  # before it exists
        early = await runtime.get_session(runtime.session_key_for("early"))
        await runtime.set_working_dir("a", "/projects/a")
        await runtime.ask("a", "go")
        store = runtime.store
        [child] = [i for i in await store.list() if i.parent_key is not None]
    assert early.info.working_dir == "/projects/early"
    stored = await store.get(runtime.session_key_for("a"))
    assert stored is not None and stored.working_dir == "/projects/a"
    assert child.working_dir == "/projects/a"


async def test_a_fresh_runtime_on_the_same_store_works_where_the_session_did(
    tmp_path: Path,
) -> None:
    project, elsewhere, db = tmp_path / "project", tmp_path / "elsewhere", tmp_path / "s.db"
    project.mkdir()
    elsewhere.mkdir()
    first = _runtime(db, ScriptedModel([]), Where(), elsewhere)
    async with first:
        await first.get_session(first.session_key_for("a"))
        await first.set_working_dir("a", str(project))
        sub = await first.submit("a", "where are you?")  # queued; this process stops here
    where = Where()
    second = _runtime(
        db, ScriptedModel([tool_step(call("where")), text_step("done")]), where, elsewhere
    )
    async with second:
        key = second.session_key_for("a")
        # Nobody calls set_working_dir here: the stored spec says where the session works.
        session = await second.factory.resolve(key)
        assert session.info.working_dir == str(project)
        assert second.loop.working_dir_for(key) == str(project)
        [settled] = await second.resume_pending()
    assert (settled.id, settled.outcome, settled.result) == (sub.id, "completed", "done")
    assert where.seen == [(key, str(project))]


async def test_a_resumed_session_whose_directory_is_gone_fails_naming_it(
    tmp_path: Path,
) -> None:
    project, elsewhere, db = tmp_path / "project", tmp_path / "elsewhere", tmp_path / "s.db"
    project.mkdir()
    elsewhere.mkdir()
    first = _runtime(db, ScriptedModel([]), Where(), elsewhere)
    async with first:
        await first.get_session(first.session_key_for("a"))
        await first.set_working_dir("a", str(project))
        await first.submit("a", "where are you?")
    project.rmdir()
    where = Where()
    second = _runtime(
        db, ScriptedModel([tool_step(call("where")), text_step("done")]), where, elsewhere
    )
    async with second:
        [settled] = await second.resume_pending()
    assert settled.outcome == "failed"
    assert settled.error is not None and "\n" not in settled.error
    assert str(project) in settled.error and "no longer exists" in settled.error
    assert where.seen == []  # never run somewhere else instead
