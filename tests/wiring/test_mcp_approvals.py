"""`always` / `never` answers for MCP tools outlive the process: kept in
`$SEAM_HOME/approvals.json` beside the command guard's, keyed by the tool's
`mcp__<server>__<tool>` name, and read back by the next runtime."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from seam.contracts.events import ToolApprovalRequired, ToolEnd
from seam.core import ScriptedModel, call, text_step, tool_step
from seam.plugins.guardrail.approvals import ApprovalCache
from seam.wiring import Runtime, create_runtime
from seam.wiring.settings import load_settings
from tests.cli.test_mcp_cli import SERVER


def folders(tmp_path: Path) -> tuple[Path, Path]:
    """A home whose config has one stdio server whose every tool asks, and a project."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    command = json.dumps([sys.executable, str(SERVER)])
    (home / "config.toml").write_text(
        f'[mcp.servers.notes]\ncommand = {command}\napproval = "always"\n', encoding="utf-8"
    )
    return home, project


def runtime(home: Path, project: Path, *steps: Any) -> tuple[Runtime, ScriptedModel]:
    settings = load_settings({}, home=home, working_dir=project)
    model = ScriptedModel([*steps, text_step("done")])
    return create_runtime(settings=settings, model=model), model


async def turn(runtime: Runtime, answers: dict[str, str]) -> list[Any]:
    events = []
    async for event in runtime.run("s", "go"):
        events.append(event)
        if isinstance(event, ToolApprovalRequired):
            assert runtime.respond("s", event.call_id, answers[event.name])  # type: ignore[arg-type]
    return events


async def test_always_and_never_are_kept_across_runtimes(tmp_path: Path) -> None:
    home, project = folders(tmp_path)
    add = tool_step(call("mcp__notes__add", a=1, b=2))
    search = tool_step(call("mcp__notes__search", query="x"))
    first, _ = runtime(home, project, add, search)
    async with first:
        events = await turn(
            first, {"mcp__notes__add": "always", "mcp__notes__search": "always_deny"}
        )
    assert len([e for e in events if isinstance(e, ToolApprovalRequired)]) == 2

    # The guard's own file, in the guard's own format.
    saved = json.loads((home / "approvals.json").read_text(encoding="utf-8"))
    assert saved == {
        "version": 1,
        "always": ["mcp__notes__add"],
        "always_deny": ["mcp__notes__search"],
    }
    assert ApprovalCache(home / "approvals.json").consume("other", "mcp__notes__add") == "always"

    second, _ = runtime(home, project, add, search)
    async with second:
        events = await turn(second, {})  # nothing may be asked: a KeyError would fail it
    assert not [e for e in events if isinstance(e, ToolApprovalRequired)]
    added, searched = (e for e in events if isinstance(e, ToolEnd))
    assert (added.result, added.is_error) == ("3", False)
    assert searched.is_error and "always deny" in searched.result


async def test_a_damaged_approvals_file_refuses_the_call_and_says_why(tmp_path: Path) -> None:
    home, project = folders(tmp_path)
    rt, _ = runtime(home, project, tool_step(call("mcp__notes__add", a=1, b=2)))
    (home / "approvals.json").write_text("{not json", encoding="utf-8")
    async with rt:
        events = await turn(rt, {})
    [end] = [e for e in events if isinstance(e, ToolEnd)]
    assert end.is_error and "saved approvals cannot be read" in end.result
    assert (home / "approvals.json").read_text(encoding="utf-8") == "{not json"
