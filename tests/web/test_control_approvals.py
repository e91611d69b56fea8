"""The dashboard's Approvals section over a real server: the requests waiting across
sessions (answered from the dashboard, the turn goes on), the remembered always-allow and
always-deny lists (a removal is seen by a running gate on its next command), and the
owner alone reaching any of it."""

from __future__ import annotations

import json
from pathlib import Path

from seam.contracts.guardrail import ApprovalDecision
from seam.core import ScriptedModel
from seam.core.scripted_model import call, text_step, tool_step
from seam.wiring.guard import build_gate
from seam.wiring.settings import Settings
from tests.web.harness import serving, sse_events


class Answers:
    """An approver that gives one answer and counts how often it was asked."""

    def __init__(self, answer: ApprovalDecision) -> None:
        self.answer = answer
        self.asked = 0

    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision:
        self.asked += 1
        return self.answer


async def test_a_pending_approval_is_listed_and_answered_from_the_dashboard(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([tool_step(call("danger")), text_step("cleaned")])
    async with serving(model, tmp_path) as served, served.client() as client:
        assert (await client.get("/api/approvals/pending")).json() == {"pending": []}
        await client.post("/api/sessions/work/messages", json={"text": "clean up"})
        asked = await sse_events(
            client, "/api/sessions/work/events", until="tool_approval_required"
        )
        pending = (await client.get("/api/approvals/pending")).json()["pending"]
        assert len(pending) == 1
        entry = pending[0]
        assert (entry["tenant"], entry["session"], entry["tool"]) == ("local", "work", "danger")
        assert entry["command"] == "rm -r build" and entry["reason"] == "recursive delete"
        assert entry["call_id"] == asked[-1]["data"]["call_id"] and entry["since"] > 0

        body = {k: entry[k] for k in ("tenant", "session", "call_id")}
        bad = await client.post("/api/approvals/pending", json={**body, "decision": "maybe"})
        assert bad.status_code == 422 and "decision" in bad.text
        answered = await client.post("/api/approvals/pending", json={**body, "decision": "once"})
        assert answered.status_code == 200, answered.text
        rest = await sse_events(client, f"/api/sessions/work/events?after={asked[-1]['id']}")
        end = next(e for e in rest if e["event"] == "tool_end")
        assert end["data"]["result"] == "decision: once"
        assert rest[-1]["data"]["text"] == "cleaned"
        assert (await client.get("/api/approvals/pending")).json() == {"pending": []}
        again = await client.post("/api/approvals/pending", json={**body, "decision": "once"})
        assert again.status_code == 409 and "is waiting" in again.text


async def test_a_removed_remembered_answer_is_asked_again_by_a_running_gate(
    tmp_path: Path,
) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as client:
        gate = build_gate(Settings(home=tmp_path / "home", working_dir=tmp_path))
        always = Answers("always")
        for command, approver in (("rm -r build", always), ("rm -r dist", Answers("always_deny"))):
            decision = await gate.check(
                command,
                session_key="s",
                tool="terminal",
                call_id="c",
                approver=approver,
                mode="manual",
            )
            assert decision.allowed == (command == "rm -r build")
        listed = (await client.get("/api/approvals/remembered")).json()
        assert listed["always"] == ["rm -r build"] and listed["always_deny"] == ["rm -r dist"]
        assert listed["path"] == str(tmp_path / "home" / "approvals.json")

        removed = await client.delete(
            "/api/approvals/remembered/always", params={"command": "rm -r build"}
        )
        assert removed.status_code == 200, removed.text
        saved = json.loads((tmp_path / "home" / "approvals.json").read_text())
        assert saved["always"] == [] and saved["always_deny"] == ["rm -r dist"]
        # The gate built before the removal asks again on its next identical command.
        asked_before = always.asked
        await gate.check(
            "rm -r build",
            session_key="s",
            tool="terminal",
            call_id="c2",
            approver=always,
            mode="manual",
        )
        assert always.asked == asked_before + 1

        gone = await client.delete(
            "/api/approvals/remembered/always_deny", params={"command": "nope"}
        )
        assert gone.status_code == 404 and "'nope' is not in the always_deny list" in gone.text
        wrong = await client.delete("/api/approvals/remembered/sometimes", params={"command": "x"})
        assert wrong.status_code == 422


async def test_a_broken_approvals_file_is_a_one_line_error(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as client:
        (tmp_path / "home" / "approvals.json").write_text("{not json")
        answer = await client.get("/api/approvals/remembered")
        assert answer.status_code == 409
        assert "not valid JSON" in answer.json()["error"]["message"]


async def test_only_the_owner_reaches_the_approvals_section(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client("alpha") as client:
        for method, path in (
            ("GET", "/api/approvals/pending"),
            ("GET", "/api/approvals/remembered"),
            ("DELETE", "/api/approvals/remembered/always?command=x"),
        ):
            answer = await client.request(method, path)
            assert answer.status_code == 403, path
        refused = await client.post(
            "/api/approvals/pending",
            json={"tenant": "alpha", "session": "s", "call_id": "c", "decision": "once"},
        )
        assert refused.status_code == 403
