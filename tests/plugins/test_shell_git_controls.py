"""Git's hooks and config stay read-only under bubblewrap unless a person approved the very
command that changes them: the terminal tool asks the real gate, and only its `by_person`
decision lifts the sandbox's read-only mount. The approval mode "off" never does."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.tools import ToolContext
from seam.core.storage import ScopedStorage
from seam.plugins.guardrail.approvals import ApprovalCache
from seam.plugins.guardrail.classifier import CommandClassifier
from seam.plugins.guardrail.gate import GuardedCommandGate
from seam.plugins.tools.shell import Terminal
from seam.services.sandbox.bwrap import BwrapSandbox, bwrap_available
from seam.services.storage.fs import FsStorage
from tests.plugins.guardrail.test_gate import ScriptedApprover
from tests.support.tools import checked

pytestmark = pytest.mark.skipif(not bwrap_available(), reason="needs a working /usr/bin/bwrap")

SET_EDITOR = "git config core.editor vi"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "."], cwd=path, check=True)
    return path


@pytest.fixture
async def sandbox(work: Path) -> AsyncIterator[BwrapSandbox]:
    box = BwrapSandbox(str(work), base_env={"PATH": "/usr/bin:/bin", "HOME": str(work.parent)})
    yield box
    await box.aclose()


def context(
    work: Path, sandbox: BwrapSandbox, approver: ScriptedApprover | None, mode: str
) -> ToolContext:
    gate = GuardedCommandGate(
        CommandClassifier(), ApprovalCache(work.parent / "approvals.json"), allow_off=True
    )
    return ToolContext(
        session_key="s1",
        storage=ScopedStorage(FsStorage(), working_dir=str(work)),
        working_dir=str(work),
        call_id="c1",
        sandbox=sandbox,
        gate=gate,
        approvals=approver,
        approval_mode=mode,  # type: ignore[arg-type]
    )


async def terminal(ctx: ToolContext, command: str) -> str:
    args: dict[str, Any] = {"command": command}
    return await checked(Terminal()).run(args, ctx)


async def test_a_person_approving_the_command_may_change_git_config(
    work: Path, sandbox: BwrapSandbox
) -> None:
    approver = ScriptedApprover(["once"])
    result = await terminal(context(work, sandbox, approver, "manual"), SET_EDITOR)
    assert result.startswith("exit code 0"), result
    assert "editor = vi" in (work / ".git/config").read_text()
    assert len(approver.asked) == 1


async def test_approval_mode_off_runs_it_but_git_config_stays_read_only(
    work: Path, sandbox: BwrapSandbox
) -> None:
    result = await terminal(context(work, sandbox, None, "off"), SET_EDITOR)
    assert not result.startswith("exit code 0"), result
    assert "editor = vi" not in (work / ".git/config").read_text()


async def test_an_approved_command_about_something_else_leaves_hooks_read_only(
    work: Path, sandbox: BwrapSandbox
) -> None:
    approver = ScriptedApprover(["once"])
    ctx = context(work, sandbox, approver, "manual")
    # It does not name .git/hooks, so the approval is not about git's controls.
    result = await terminal(ctx, 'd=.git; cp /bin/true "$d/hooks/pre-commit"')
    assert not result.startswith("exit code 0"), result
    assert not (work / ".git/hooks/pre-commit").exists()
