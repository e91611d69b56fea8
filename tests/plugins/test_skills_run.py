"""Skills that run: a real public skill with a script (`webapp-testing` from the Anthropic
skills collection, vendored in tests/fixtures/skills) is loaded with `skill_view` and its
script run through a scripted model in the real bubblewrap sandbox, at `/skills/<name>`,
read-only, without approval once the skill is trusted; an untrusted skill is neither
offered nor mounted, and running its script asks."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.events import ToolApprovalRequired, ToolEnd
from seam.contracts.storage import Reach
from seam.contracts.tools import ToolContext
from seam.core import ScriptedModel, call, text_step, tool_step
from seam.core.storage import InMemoryStorage
from seam.plugins.guardrail.classifier import CommandClassifier
from seam.plugins.guardrail.skill_runs import SkillPlaces
from seam.plugins.skills.tools import SkillViewTool
from seam.services.sandbox.bwrap import DEFAULT_BWRAP, BwrapSandbox, bwrap_available
from seam.wiring import Runtime, create_runtime
from seam.wiring.settings import load_settings
from seam.wiring.skills import build_skills, trust_store

SKILL = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "webapp-testing"
BWRAP = Path(DEFAULT_BWRAP).exists() and bwrap_available()
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="no bwrap")
HELP = "python3 /skills/webapp-testing/scripts/with_server.py --help"
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


def project_with_skill(tmp_path: Path, *, trusted: bool) -> tuple[Path, Path]:
    """A project holding the vendored skill in `.agents/skills` (trusted or not), and
    SEAM_HOME."""
    project, home = tmp_path / "project", tmp_path / "home"
    folder = project / ".agents" / "skills" / "webapp-testing"
    shutil.copytree(SKILL, folder)
    home.mkdir()
    if trusted:
        trust_store(load_settings(ENV, home=home, working_dir=project)).trust(folder)
    return project, home


def runtime_for(project: Path, home: Path, *steps: Any) -> tuple[Runtime, ScriptedModel]:
    settings = load_settings(ENV, home=home, working_dir=project)
    model = ScriptedModel([*steps])
    return create_runtime(settings=settings, model=model), model


async def turn(runtime: Runtime, answer: str | None = None) -> list[Any]:
    events = []
    async for event in runtime.run("s", "test the web app"):
        events.append(event)
        if isinstance(event, ToolApprovalRequired) and answer is not None:
            assert runtime.respond("s", event.call_id, answer)  # type: ignore[arg-type]
    return events


def terminal(command: str) -> Any:
    return tool_step(call("terminal", command=command))


@needs_bwrap
async def test_a_trusted_skills_script_runs_in_the_sandbox_without_asking(tmp_path: Path) -> None:
    project, home = project_with_skill(tmp_path, trusted=True)
    serve = (
        "python3 /skills/webapp-testing/scripts/with_server.py"
        " --server 'python3 -m http.server 8765 --bind 127.0.0.1' --port 8765 --"
        " python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:8765\").status)'"
    )
    runtime, model = runtime_for(
        project,
        home,
        tool_step(call("skill_view", name="webapp-testing")),
        terminal(HELP),
        terminal(serve),
        terminal("touch /skills/webapp-testing/x || echo read-only"),
        text_step("done"),
    )
    async with runtime:
        events = await turn(runtime, answer="once")
    # Only the write asks (approved: the folder is read-only all the same).
    [asked] = [e for e in events if isinstance(e, ToolApprovalRequired)]
    assert asked.command.startswith("touch /skills/webapp-testing/x")
    view, helped, served, touched = [e for e in events if isinstance(e, ToolEnd)]
    assert "Folder: /skills/webapp-testing (read-only" in view.result
    assert "scripts/with_server.py" in view.result
    assert not helped.is_error and "--server SERVERS" in helped.result, helped.result
    assert "200" in served.result, served.result
    assert "read-only" in touched.result
    assert not (project / ".agents/skills/webapp-testing/x").exists()
    assert "webapp-testing" in model.requests[0].system


@needs_bwrap
async def test_an_untrusted_skill_is_not_mounted_and_its_script_asks(tmp_path: Path) -> None:
    project, home = project_with_skill(tmp_path, trusted=False)
    runtime, model = runtime_for(
        project,
        home,
        terminal("ls /skills || echo no skills here"),
        terminal("python3 .agents/skills/webapp-testing/scripts/with_server.py --help"),
        text_step("done"),
    )
    async with runtime:
        events = await turn(runtime, answer="deny")
    [asked] = [e for e in events if isinstance(e, ToolApprovalRequired)]
    assert "not trusted" in asked.reason and "webapp-testing" in asked.reason
    listed, refused = [e for e in events if isinstance(e, ToolEnd)]
    assert "no skills here" in listed.result
    assert refused.is_error and "usage" not in refused.result
    assert "- webapp-testing:" not in model.requests[0].system


@needs_bwrap
async def test_the_sandbox_shows_each_trusted_skill_read_only_at_a_stable_path(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    asked: list[str] = []

    def skills(working_dir: str) -> dict[str, str]:
        asked.append(working_dir)
        return {"webapp-testing": str(SKILL), "../escape": str(tmp_path)}

    reach = Reach(read=(str(work),), write=(str(work),))
    sandbox = BwrapSandbox(str(work), base_env=ENV, reach=reach, skills=skills)
    try:
        result = await sandbox.run("ls /skills; head -2 /skills/webapp-testing/SKILL.md")
        assert result.output.splitlines() == ["webapp-testing", "---", "name: webapp-testing"]
        result = await sandbox.run("echo x > /skills/webapp-testing/SKILL.md")
        assert result.exit_code != 0
    finally:
        await sandbox.aclose()
    assert asked == [str(work.resolve())] * 2  # asked again before each command
    assert (SKILL / "SKILL.md").read_text().startswith("---\nname: webapp-testing")


def classifier(trusted: list[str]) -> CommandClassifier:
    places = SkillPlaces(("/skills", "/home/me/.seam/skills"), ".agents/skills", lambda _: trusted)
    return CommandClassifier(home="/home/me", protected=("/home/me/.seam",), skills=places)


# A command, and what the guard finds: "verdict rule" (the rule when it matters).
GUARD_CASES = {
    "python3 /skills/good/scripts/run.py --help": "safe proof:run",
    "env python3 /skills/good/scripts/run.py": "safe proof:run",
    "python3 /home/me/.seam/skills/good/run.py": "safe proof:run",
    "python3 .agents/skills/ok/run.py": "safe proof:run",
    "python3 /skills/other/run.py": "needs_approval skill:untrusted",
    "bash .agents/skills/cloned/install.sh": "needs_approval skill:untrusted",
    "cd .agents && python3 skills/cloned/run.py": "needs_approval skill:untrusted",
    # A trusted skill's script, but the rest of the command is judged as ever.
    "python3 /skills/good/run.py > ~/.seam/config.toml": "forbidden floor:seam-home",
    "python3 /skills/good/run.py ~/.seam/approvals.json": "forbidden floor:seam-home",
    "python3 /skills/good/run.py | sh": "needs_approval",
    # Seam's home is still out of reach, but for a trusted skill's own script.
    "python3 ~/.seam/skills/other/run.py": "forbidden floor:seam-home",
    "python3 ~/.seam/skills/good/../../config.toml": "forbidden floor:seam-home",
    "cat ~/.seam/skills/good/SKILL.md": "forbidden floor:seam-home",
}


@pytest.mark.parametrize("command", list(GUARD_CASES))
def test_the_guard_runs_trusted_skills_scripts_and_asks_for_others(command: str) -> None:
    trusted = ["/skills/good", "/home/me/.seam/skills/good", "/work/p/.agents/skills/ok"]
    found = classifier(trusted).classify(command, cwd="/work/p")
    verdict, _, rule = GUARD_CASES[command].partition(" ")
    assert found.verdict == verdict, found
    assert found.rule == (rule or found.rule), found


def test_trust_that_cannot_be_read_trusts_nothing() -> None:
    def broken(_: str | None) -> list[str]:
        raise OSError("unreadable")

    places = SkillPlaces(("/skills",), ".agents/skills", broken)
    found = CommandClassifier(skills=places).classify("python3 /skills/good/run.py")
    assert (found.verdict, found.rule) == ("needs_approval", "skill:untrusted")


def test_the_arguments_stay_as_written() -> None:
    found = classifier(["/skills/good"]).classify("python3 /skills/good/run.py 'a b'", cwd="/w")
    assert found.normalized == "python3 /skills/good/run.py 'a b'"


@dataclass
class LocalSandbox:
    """What skill_view asks of a sandbox without a skills mount (the local backend)."""

    name: str = "local"


@dataclass
class MountingSandbox:
    skills_at: str = "/skills"


async def test_skill_view_names_the_folder_as_commands_reach_it(tmp_path: Path) -> None:
    project, home = project_with_skill(tmp_path, trusted=True)
    tool = SkillViewTool(build_skills(load_settings(ENV, home=home, working_dir=project)))
    real = project / ".agents/skills/webapp-testing"
    for sandbox, folder in (
        (None, str(real)),
        (LocalSandbox(), str(real)),
        (MountingSandbox(), "/skills/webapp-testing"),
    ):
        ctx = ToolContext(session_key="s", storage=InMemoryStorage(), sandbox=sandbox)  # type: ignore[arg-type]
        text = await tool.run({"name": "webapp-testing"}, ctx)
        assert f"Folder: {folder} (read-only" in text
