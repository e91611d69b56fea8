"""Skills follow each session's working directory: two sessions of one runtime, each in
its own project (as two ACP sessions are), see their own `.agents/skills`, in the index
and through `skill_view`, and a session's index stays byte-stable for its life."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seam.apps.acp.sessions import set_working_dir
from seam.apps.cli.skills import trust_paths
from seam.contracts.events import ToolEnd
from seam.core import ScriptedModel, call, text_step, tool_step
from seam.wiring import Runtime, create_runtime
from seam.wiring.settings import Settings, load_settings
from tests.plugins.test_skills import write_skill


def trusted_skill(settings: Settings, project: Path, name: str, description: str) -> Path:
    folder = write_skill(project / ".agents" / "skills", name, description, body=f"{name} steps")
    trust_paths(folder, settings)
    return folder


async def turn(runtime: Runtime, session: str) -> list[Any]:
    return [event async for event in runtime.run(session, "go")]


async def test_each_session_sees_the_skills_of_its_own_working_directory(tmp_path: Path) -> None:
    home, start, a, b = (tmp_path / name for name in ("home", "start", "a", "b"))
    for folder in (start, a, b):
        folder.mkdir()
    settings = load_settings({}, home=home, working_dir=start)  # no skills where it started
    trusted_skill(settings, a, "alpha-build", "Build project A.")
    trusted_skill(settings, b, "beta-deploy", "Deploy project B.")
    model = ScriptedModel(
        [
            tool_step(call("skill_view", name="alpha-build")),
            text_step("a1"),
            tool_step(call("skill_view", name="alpha-build")),
            text_step("b1"),
            text_step("a2"),
        ]
    )
    async with create_runtime(settings=settings, model=model) as runtime:
        await set_working_dir(runtime, "a", str(a))
        await set_working_dir(runtime, "b", str(b))
        [in_a] = [e for e in await turn(runtime, "a") if isinstance(e, ToolEnd)]
        [in_b] = [e for e in await turn(runtime, "b") if isinstance(e, ToolEnd)]
        # A skill trusted in A mid-session shows from A's next session, not in this one.
        trusted_skill(settings, a, "alpha-test", "Test project A.")
        await turn(runtime, "a")
    first_a, first_b, second_a = (model.requests[i].system for i in (0, 2, 4))
    assert "- alpha-build: Build project A." in first_a and "beta-deploy" not in first_a
    assert "- beta-deploy: Deploy project B." in first_b and "alpha-build" not in first_b
    assert second_a == first_a
    assert "skill_view" in {tool.name for tool in model.requests[0].tools}
    assert not in_a.is_error and "alpha-build steps" in in_a.result
    assert in_b.is_error and "no skill named 'alpha-build'" in in_b.result
    assert "beta-deploy" in in_b.result  # what B does have


async def test_only_sessions_working_where_skills_are_get_the_skill_tools(tmp_path: Path) -> None:
    home, start, a, b = (tmp_path / name for name in ("home", "start", "a", "b"))
    for folder in (start, a, b):
        folder.mkdir()
    settings = load_settings({}, home=home, working_dir=start)
    trusted_skill(settings, a, "alpha-build", "Build project A.")
    model = ScriptedModel([text_step("a1"), text_step("b1"), text_step("start1")])
    async with create_runtime(settings=settings, model=model) as runtime:
        await set_working_dir(runtime, "a", str(a))
        await set_working_dir(runtime, "b", str(b))  # a project with no skills
        for session in ("a", "b", "start"):
            await turn(runtime, session)
    in_a, in_b, in_start = ({tool.name for tool in r.tools} for r in model.requests)
    assert {"skill_view", "skill_write"} <= in_a
    assert not {"skill_view", "skill_write"} & (in_b | in_start)
    assert "read_file" in in_b and "read_file" in in_start
    assert "alpha-build" not in model.requests[1].system
