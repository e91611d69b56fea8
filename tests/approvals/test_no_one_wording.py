"""The one wording for "no one was available to approve", where each piece says it.

`ask_person` (cron, skill_write, MCP tools) and the command gate refuse with
`nobody_there`'s sentence whenever no one could answer: no approver, an `unavailable`
answer, or silence. The gate adds a `[guard] allow` entry only where it would help (a
plain command inside a sandbox); the CLI's exit-5 line repeats what the tool told the
model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from seam.apps.cli.exits import waited_line
from seam.contracts import tool_approval
from seam.contracts.events import ToolApprovalRequired
from seam.contracts.guardrail import ApprovalDecision
from seam.contracts.tool_approval import ask_person, nobody_there
from seam.contracts.tools import ToolContext, ToolError
from seam.core.storage import InMemoryStorage
from seam.plugins.guardrail.approvals import ApprovalCache
from seam.plugins.guardrail.classifier import CommandClassifier
from seam.plugins.guardrail.gate import GuardedCommandGate


class Answers:
    """An approver that answers from a script; None: never answers."""

    def __init__(self, answer: ApprovalDecision | None) -> None:
        self.answer = answer

    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision:
        if self.answer is None:
            await asyncio.Event().wait()
        assert self.answer is not None
        return self.answer


def context(approver: Answers | None) -> ToolContext:
    return ToolContext(session_key="s", storage=InMemoryStorage(), approvals=approver)


def test_the_sentence_names_what_and_how_to_allow_it() -> None:
    said = nobody_there("cron add --every '1h'")
    assert said.startswith("refused: no one was available to approve cron add --every '1h'")
    assert "not a refusal by the person" in said and "denied" not in said
    assert "--yes" in said and "seam chat" in said and "[guard]" not in said
    assert said.endswith("a paired chat).")
    also = nobody_there("x", also='add [guard] allow = ["x"] to config.toml')
    assert also.endswith('or add [guard] allow = ["x"] to config.toml.')


@pytest.mark.parametrize("approver", [None, Answers("unavailable")])
async def test_ask_person_refuses_when_no_one_can_answer(approver: Answers | None) -> None:
    with pytest.raises(ToolError) as raised:
        await ask_person(context(approver), tool="cron", command="cron add x", reason="why")
    assert str(raised.value) == nobody_there("cron add x")


async def test_ask_person_silence_is_no_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool_approval, "APPROVAL_TIMEOUT", 0.01)
    with pytest.raises(ToolError, match="no one was available to approve skill_write"):
        await ask_person(context(Answers(None)), tool="w", command="skill_write x", reason="r")


async def test_ask_person_hands_a_real_answer_back() -> None:
    for answer in ("once", "deny", "always_deny"):
        got = await ask_person(context(Answers(answer)), tool="t", command="c", reason="r")
        assert got == answer


async def _refusal(tmp_path: Path, command: str, *, isolated: bool) -> str:
    gate = GuardedCommandGate(CommandClassifier(), ApprovalCache(tmp_path / "approvals.json"))
    decision = await gate.check(
        command,
        session_key="s",
        tool="terminal",
        call_id="c",
        approver=Answers("unavailable"),
        mode="manual",
        isolated=isolated,
    )
    assert not decision.allowed
    assert "no one was available to approve" in decision.reason
    return decision.reason


async def test_the_gate_offers_guard_allow_only_where_it_helps(tmp_path: Path) -> None:
    plain = await _refusal(tmp_path, "rm -r build", isolated=True)
    assert plain.endswith('or add [guard] allow = ["rm -r build"] to config.toml.')
    # Without a sandbox an allow still asks; an allow covers one command, not a chain.
    assert "[guard]" not in await _refusal(tmp_path, "rm -r build", isolated=False)
    assert "[guard]" not in await _refusal(tmp_path, "cd src && rm -r build", isolated=True)


def test_the_exit_line_repeats_what_the_model_was_told() -> None:
    asked = ToolApprovalRequired("s", "t", 1, "c1", "cron", "cron add x", "a job")
    told = "error: " + nobody_there("cron add x")
    assert waited_line(asked, told) == "cron: " + nobody_there("cron add x")[len("refused: ") :]
    # Without what the tool said (it never ended), the shared words, no config entry.
    fallback = waited_line(asked)
    assert fallback.startswith("cron: no one was available to approve 'cron add x' (a job)")
    assert "[guard]" not in fallback
