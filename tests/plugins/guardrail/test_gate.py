"""GuardedCommandGate with a scripted approver (it records every question)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

import pytest

from seam.contracts.guardrail import ApprovalDecision, Classification, CommandGate, GateDecision
from seam.plugins.guardrail.approvals import ApprovalCache
from seam.plugins.guardrail.classifier import CommandClassifier
from seam.plugins.guardrail.gate import GuardedCommandGate, Judge, JudgeVerdict

RISKY = "rm -rf build"


class ScriptedApprover:
    """Answers from a script; an answer of None means never answering."""

    def __init__(self, answers: Iterable[ApprovalDecision | Exception | None] = ()) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, str]] = []

    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision:
        self.asked.append({"call_id": call_id, "tool": tool, "command": command, "reason": reason})
        answer = self.answers.pop(0)
        if answer is None:
            await asyncio.Event().wait()  # nobody ever answers
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[return-value]


def judge_saying(verdict: JudgeVerdict | Exception, calls: list[str] | None = None) -> Judge:
    async def judge(command: str, found: Classification) -> JudgeVerdict:
        if calls is not None:
            calls.append(f"{command} [{found.rule}]")
        if isinstance(verdict, Exception):
            raise verdict
        return verdict

    return judge


def make_gate(tmp_path: Path, **options: object) -> GuardedCommandGate:
    cache = ApprovalCache(tmp_path / "approvals.json")
    return GuardedCommandGate(CommandClassifier(), cache, **options)  # type: ignore[arg-type]


async def check(
    gate: GuardedCommandGate,
    command: str = RISKY,
    approver: ScriptedApprover | None = None,
    *,
    mode: str = "manual",
    session: str = "s1",
) -> GateDecision:
    return await gate.check(
        command,
        session_key=session,
        tool="terminal",
        call_id="c1",
        approver=approver,
        mode=mode,  # type: ignore[arg-type]
    )


def test_it_is_a_command_gate(tmp_path: Path) -> None:
    assert isinstance(make_gate(tmp_path), CommandGate)


async def test_forbidden_is_refused_without_asking_in_every_mode(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, allow_off=True, judge=judge_saying("approve"))
    approver = ScriptedApprover(["always"])
    for mode in ("manual", "smart", "off"):
        decision = await check(gate, "sudo rm -rf /", approver, mode=mode)
        assert not decision.allowed
        assert "floor:rm-root" in decision.reason and "never allowed" in decision.reason
    assert approver.asked == []


async def test_safe_runs_without_asking(tmp_path: Path) -> None:
    approver = ScriptedApprover()
    decision = await check(make_gate(tmp_path), "ls -la", approver)
    assert decision.allowed and decision.classification.rule == "proof:read"
    assert approver.asked == []


async def test_manual_asks_the_person_with_the_normalised_command(tmp_path: Path) -> None:
    approver = ScriptedApprover(["once", "once"])
    gate = make_gate(tmp_path)

    decision = await check(gate, "\x1b[1m'r''m'\x1b[0m -rf build", approver)

    assert (decision.allowed, decision.decision) == (True, "once")
    assert approver.asked == [
        {
            "call_id": "c1",
            "tool": "terminal",
            "command": RISKY,
            "reason": "deletes a directory tree (pattern:rm-recursive)",
        }
    ]
    assert (await check(gate, RISKY, approver)).allowed  # once: asked again
    assert len(approver.asked) == 2


async def test_a_session_approval_is_not_asked_again_in_that_session(tmp_path: Path) -> None:
    approver = ScriptedApprover(["session", "deny"])
    gate = make_gate(tmp_path)
    assert (await check(gate, approver=approver)).decision == "session"

    again = await check(gate, approver=approver)
    assert again.allowed and again.decision is None and "earlier in this session" in again.reason
    other = await check(gate, approver=approver, session="s2")
    assert not other.allowed and other.decision == "deny"
    assert len(approver.asked) == 2


async def test_always_is_remembered_by_a_new_gate(tmp_path: Path) -> None:
    await check(make_gate(tmp_path), approver=ScriptedApprover(["always"]))

    approver = ScriptedApprover()
    decision = await check(make_gate(tmp_path), approver=approver, session="other")
    assert decision.allowed and "always approved" in decision.reason
    assert approver.asked == []


async def test_deny_refuses_this_call_only(tmp_path: Path) -> None:
    approver = ScriptedApprover(["deny", "once"])
    gate = make_gate(tmp_path)
    denied = await check(gate, approver=approver)
    assert (denied.allowed, denied.decision, denied.reason) == (
        False,
        "deny",
        "refused: the person denied it",
    )
    assert (await check(gate, approver=approver)).allowed


async def test_always_deny_refuses_from_now_on_without_asking(tmp_path: Path) -> None:
    approver = ScriptedApprover(["always_deny"])
    first = await check(make_gate(tmp_path), approver=approver)
    assert (first.allowed, first.decision) == (False, "always_deny")

    for gate in (make_gate(tmp_path), make_gate(tmp_path, allow_off=True)):
        later = await check(gate, approver=approver, mode="off")
        assert not later.allowed and "always deny" in later.reason
    assert len(approver.asked) == 1


async def test_no_answer_within_the_timeout_is_no_one_there(tmp_path: Path) -> None:
    approver = ScriptedApprover([None])
    decision = await check(make_gate(tmp_path, timeout=0.05), approver=approver)
    assert not decision.allowed
    assert decision.reason.startswith(
        "refused: no one was available to approve 'rm -rf build' (deletes a directory tree"
        " (pattern:rm-recursive)) within 0.05 s, so it did not run"
    )


async def test_without_an_approver_nobody_can_approve(tmp_path: Path) -> None:
    decision = await check(make_gate(tmp_path), approver=None)
    assert not decision.allowed
    assert decision.reason == (
        "refused: no one was available to approve 'rm -rf build' (deletes a directory tree"
        " (pattern:rm-recursive)), so it did not run; this is not a refusal by the person."
        " To allow it: pass --yes to seam run, or ask where a person can answer (seam chat,"
        ' the web page, a paired chat), or add [guard] allow = ["rm -rf build"] to'
        " config.toml."
    )


async def test_an_unavailable_answer_says_no_one_was_there_and_is_not_remembered(
    tmp_path: Path,
) -> None:
    approver = ScriptedApprover(["unavailable", "once"])
    gate = make_gate(tmp_path)
    first = await check(gate, approver=approver)
    assert (first.allowed, first.decision) == (False, "unavailable")
    assert "no one was available to approve 'rm -rf build'" in first.reason
    assert "denied" not in first.reason
    assert (await check(gate, approver=approver)).allowed  # asked again: nothing was kept


async def test_a_failing_or_confused_approver_refuses(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    failed = await check(gate, approver=ScriptedApprover([ConnectionError("surface closed")]))
    assert not failed.allowed and "surface closed" in failed.reason
    confused = await check(gate, approver=ScriptedApprover(["yes please"]))  # type: ignore[list-item]
    assert not confused.allowed and "unrecognised answer" in confused.reason


async def test_smart_mode_follows_the_judge(tmp_path: Path) -> None:
    calls: list[str] = []
    approver = ScriptedApprover()
    approved = await check(
        make_gate(tmp_path, judge=judge_saying("approve", calls)), approver=approver, mode="smart"
    )
    assert approved.allowed and "approval judge" in approved.reason
    refused = await check(
        make_gate(tmp_path, judge=judge_saying("deny")), approver=approver, mode="smart"
    )
    assert not refused.allowed and "refused by the approval judge" in refused.reason
    assert calls == [f"{RISKY} [pattern:rm-recursive]"]
    assert approver.asked == []


@pytest.mark.parametrize(
    "judge", [judge_saying("ask"), judge_saying(RuntimeError("model down")), None]
)
async def test_smart_mode_asks_the_person_when_the_judge_cannot_decide(
    tmp_path: Path, judge: Judge | None
) -> None:
    approver = ScriptedApprover(["once"])
    decision = await check(make_gate(tmp_path, judge=judge), approver=approver, mode="smart")
    assert decision.allowed and decision.decision == "once"
    assert len(approver.asked) == 1


async def test_off_runs_without_asking_only_where_allowed(tmp_path: Path) -> None:
    approver = ScriptedApprover(["deny"])
    decision = await check(make_gate(tmp_path, allow_off=True), approver=approver, mode="off")
    assert decision.allowed and "approval mode off" in decision.reason
    assert approver.asked == []

    gateway = await check(make_gate(tmp_path, allow_off=False), approver=approver, mode="off")
    assert not gateway.allowed and gateway.decision == "deny"  # "off" was treated as "manual"
    assert len(approver.asked) == 1


async def test_a_corrupt_approvals_file_refuses_with_its_name(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    (tmp_path / "approvals.json").write_text("{oops")
    decision = await check(gate, "ls", ScriptedApprover())
    assert not decision.allowed and str(tmp_path / "approvals.json") in decision.reason


# --- no isolation (the local backend) ---------------------------------------------------


async def unisolated(
    gate: GuardedCommandGate, command: str, approver: ScriptedApprover | None, mode: str
) -> GateDecision:
    return await gate.check(
        command,
        session_key="s1",
        tool="terminal",
        call_id="c1",
        approver=approver,
        mode=mode,  # type: ignore[arg-type]
        isolated=False,
    )


async def test_without_isolation_only_read_only_commands_run_unasked(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, allow_off=True, judge=judge_saying("approve"))
    for mode in ("manual", "smart", "off"):
        read = await unisolated(gate, "pwd && ls -la | grep x", None, mode)
        assert read.allowed and read.classification.read_only, mode
        # Proven, but it runs the project's code: safe inside a sandbox, a person's call
        # without one.
        assert (await check(gate, "pytest -q", None, mode=mode)).allowed
        refused = await unisolated(gate, "pytest -q", None, mode)
        assert not refused.allowed, mode
        assert refused.classification.rule == "policy:not-isolated"
        assert "no one was available to approve" in refused.reason


async def test_without_isolation_off_and_the_judge_still_ask_the_person(tmp_path: Path) -> None:
    calls: list[str] = []
    gate = make_gate(tmp_path, allow_off=True, judge=judge_saying("approve", calls))
    approver = ScriptedApprover(["deny", "deny", "once"])
    off = await unisolated(gate, RISKY, approver, "off")
    smart = await unisolated(gate, RISKY, approver, "smart")
    assert not off.allowed and not smart.allowed
    assert len(calls) == 1  # the judge was consulted, but may only refuse
    once = await unisolated(gate, "touch notes.txt", approver, "manual")
    assert once.allowed and once.decision == "once"
    assert [a["command"] for a in approver.asked] == [RISKY, RISKY, "touch notes.txt"]
    denying = make_gate(tmp_path, judge=judge_saying("deny"))
    assert not (await unisolated(denying, RISKY, ScriptedApprover(), "smart")).allowed


async def test_a_remembered_approval_counts_without_isolation(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    approver = ScriptedApprover(["session"])
    assert (await unisolated(gate, "make test", approver, "manual")).allowed
    again = await unisolated(gate, "make test", None, "manual")
    assert again.allowed and "earlier in this session" in again.reason


async def test_protected_paths_are_forbidden_on_both_backends(tmp_path: Path) -> None:
    home = tmp_path / "seam"
    guard = CommandClassifier(protected=[str(home)])
    gate = GuardedCommandGate(guard, ApprovalCache(tmp_path / "approvals.json"), allow_off=True)
    command = f"echo '{{}}' > {home}/approvals.json"
    for isolated in (True, False):
        decision = await gate.check(
            command,
            session_key="s1",
            tool="terminal",
            call_id="c1",
            approver=ScriptedApprover(["always"]),
            mode="off",
            isolated=isolated,
        )
        assert not decision.allowed and decision.classification.rule == "floor:seam-home"
    # A relative path is judged from the working directory the tool gives.
    relative = await gate.check(
        "cat approvals.json",
        session_key="s1",
        tool="terminal",
        call_id="c1",
        approver=None,
        mode="off",
        working_dir=str(home),
    )
    assert relative.classification.rule == "floor:seam-home"
