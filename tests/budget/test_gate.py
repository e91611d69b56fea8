"""The budget gate in the loop: a looping scripted model is stopped before the call that
would pass a limit, with a message naming the limit, the spend and how to raise it; the
day's limit counts every session of the day (a fake clock moves the day on); a
personality's or a cron job's limit wins when it is tighter."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from seam.contracts.budget import BudgetLimits, BudgetScope
from seam.contracts.events import Halt
from seam.contracts.messages import Usage
from seam.contracts.personality import Personality
from seam.core import AgentLoop, DefaultToolRegistry, ScriptedModel, Step, call
from seam.core.identity import create_session_storage_key
from seam.core.personalities import StaticPersonalityRegistry
from seam.services.budget.gate import StoreBudgetGate, day_start
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.clock import ManualClock
from tests.support.tools import Echo

PER_CALL = Usage(input_tokens=900, output_tokens=100)  # 1,000 tokens a call
UTC = ZoneInfo("UTC")


def looping(calls: int = 50) -> ScriptedModel:
    """A model that calls a tool forever (for `calls` calls: more than any limit here)."""
    return ScriptedModel([Step(calls=[call("echo")], usage=PER_CALL) for _ in range(calls)])


def key(name: str) -> str:
    return create_session_storage_key("local", "cli", name)


def loop_of(
    model: ScriptedModel, store: SQLiteSessionStore, gate: StoreBudgetGate, **kw: Any
) -> AgentLoop:
    tools = DefaultToolRegistry()
    tools.register_tool(Echo())
    return AgentLoop(model=model, sessions=store, tools=tools, budget=gate, **kw)


async def run(loop: AgentLoop, name: str, personality: str | None = None) -> list[Any]:
    return [e async for e in loop.run(key(name), "go", personality=personality)]


def halt_of(events: list[Any]) -> Halt:
    return next(e for e in events if isinstance(e, Halt))


async def test_a_session_limit_stops_a_looping_model_before_the_call(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    gate = StoreBudgetGate(store, BudgetLimits.of({"session_tokens": 3_500}))
    model = looping()
    events = await run(loop_of(model, store, gate), "a")
    halt = halt_of(events)
    assert halt.reason == "budget"
    assert halt.message == (
        "budget: this session has used 4,000 of 3,500 tokens ([budget] session_tokens);"
        " raise it in config.toml or start a new session"
    )
    assert events[-1].finish_reason == "budget"
    assert len(model.requests) == 4  # the fifth call was never made


async def test_the_day_limit_counts_every_session_until_midnight(tmp_path: Path) -> None:
    clock = ManualClock(day_start(1_700_000_000, UTC) + 10 * 3600)
    store = SQLiteSessionStore(str(tmp_path / "s.db"), clock=clock)
    gate = StoreBudgetGate(store, BudgetLimits.of({"day_tokens": 5_000}), zone=UTC, clock=clock)
    model = looping(100)
    loop = loop_of(model, store, gate)
    first = await run(loop, "a")
    assert "today's calls have used 5,000 of 5,000 tokens" in halt_of(first).message
    second = await run(loop, "b")  # another session, the same day: refused at once
    assert halt_of(second).reason == "budget" and len(model.requests) == 5
    clock.advance(14 * 3600)  # past midnight: a new day's allowance
    third = await run(loop, "c")
    assert halt_of(third).reason == "budget" and len(model.requests) == 10


async def test_a_tighter_personality_limit_wins(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    frugal = Personality("frugal", "soul", budget=BudgetLimits.of({"session_tokens": 2_000}))
    personalities = StaticPersonalityRegistry([Personality("default", "soul"), frugal])
    gate = StoreBudgetGate(store, BudgetLimits.of({"session_tokens": 10_000}))
    model = looping()
    events = await run(loop_of(model, store, gate, personalities=personalities), "a", "frugal")
    assert "(personality frugal [budget] session_tokens)" in halt_of(events).message
    assert "raise it in personalities/frugal/config.toml" in halt_of(events).message
    assert len(model.requests) == 2


async def test_a_cron_jobs_own_limit_wins_for_its_runs(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))

    async def job_limits(job: str) -> BudgetLimits | None:
        return BudgetLimits.of({"job_tokens": 3_000}) if job == "ab12" else None

    gate = StoreBudgetGate(store, BudgetLimits.of({"job_tokens": 20_000}), job_limits=job_limits)
    model = looping()
    events = await run(loop_of(model, store, gate), "cron:ab12:2026-12-05T07:00:00Z")
    message = halt_of(events).message
    assert message.startswith("budget: this cron run has used 3,000 of 3,000 tokens")
    assert "(cron job ab12 --max-tokens)" in message
    assert "`seam cron edit ab12 --max-tokens ...`" in message
    assert len(model.requests) == 3


async def test_cost_counts_priced_calls_and_says_when_a_price_is_unknown(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))

    def pricing(provider: str, model: str, usage: Usage) -> float | None:
        return usage.total_tokens / 1_000 * 0.01 if model == "priced" else None

    gate = StoreBudgetGate(store, BudgetLimits.of({"session_usd": 0.025}), pricing=pricing)
    priced = ScriptedModel([Step(calls=[call("echo")], usage=PER_CALL)] * 10, model="priced")
    events = await run(loop_of(priced, store, gate, pricing=pricing), "a")
    assert "used $0.0300 of $0.0250 ([budget] session_usd)" in halt_of(events).message
    # A model with no price is limited by tokens only: its calls add no cost.
    unknown = looping(6)
    events = await run(loop_of(unknown, store, gate, pricing=pricing), "b")
    assert events[-1].finish_reason == "error"  # the script ran out, no limit stopped it
    lines = await gate.lines(BudgetScope(key("b"), "default", "scripted", "scripted-model"))
    assert lines[0].spent == 0 and lines[0].unpriced


async def test_a_gate_with_no_limit_enforces_one_the_moment_it_is_set(tmp_path: Path) -> None:
    """No limit anywhere: the check reads nothing. A personality that gains a limit, or
    a cron job given one, is held to it from the next call, in the same process."""
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    limits: dict[str, BudgetLimits] = {}

    async def job_limits(job: str) -> BudgetLimits | None:
        return limits.get(job)

    gate = StoreBudgetGate(store, job_limits=job_limits)
    scope = BudgetScope(key("a"), "default", "p", "m")
    assert await gate.check(scope) is None and await gate.lines(scope) == []
    frugal = Personality("frugal", "soul", budget=BudgetLimits.of({"session_tokens": 2_000}))
    personalities = StaticPersonalityRegistry([Personality("default", "soul"), frugal])
    model = looping()
    events = await run(loop_of(model, store, gate, personalities=personalities), "c", "frugal")
    assert "(personality frugal [budget] session_tokens)" in halt_of(events).message
    assert len(model.requests) == 2
    cron = "cron:ab12:2026-12-05T07:00:00Z"
    unlimited = looping(4)
    events = await run(loop_of(unlimited, store, gate), cron)
    assert not any(isinstance(e, Halt) and e.reason == "budget" for e in events)
    assert len(unlimited.requests) > 3  # no job limit yet: every scripted call made
    limits["ab12"] = BudgetLimits.of({"job_tokens": 3_000})
    limited = looping()
    events = await run(loop_of(limited, store, gate), "cron:ab12:2026-12-05T08:00:00Z")
    assert "(cron job ab12 --max-tokens)" in halt_of(events).message
    assert len(limited.requests) == 3
