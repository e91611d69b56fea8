"""The Usage section's API over a real server: today's spend against each day limit,
and the session limits set, each with where it is set."""

from __future__ import annotations

from pathlib import Path

from seam.contracts.budget import BudgetLimits
from seam.contracts.messages import Usage
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from seam.services.budget.gate import StoreBudgetGate
from seam.services.sessions.sqlite import SQLiteSessionStore
from tests.web.harness import serving, sse_events


async def test_usage_lists_the_limits_with_todays_spend(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "sessions.db"))
    gate = StoreBudgetGate(store, BudgetLimits.of({"session_tokens": 500, "day_tokens": 1_000}))
    model = ScriptedModel([text_step("one", usage=Usage(100, 10))])
    async with serving(model, tmp_path, store=store, budget=gate) as served:
        client = served.client()
        async with client:
            sent = await client.post("/api/sessions/first/messages", json={"text": "hi"})
            assert sent.status_code == 202, sent.text
            await sse_events(client, "/api/sessions/first/events")
            body = (await client.get("/api/usage")).json()
    assert body["budget"] == {
        "today": [
            {
                "period": "day",
                "unit": "tokens",
                "spent": 110.0,
                "allowed": 1_000,
                "source": "[budget] day_tokens",
                "reached": False,
                "cost_unknown": False,
            }
        ],
        "set": [
            {
                "period": "session",
                "unit": "tokens",
                "allowed": 500,
                "source": "[budget] session_tokens",
            }
        ],
    }
