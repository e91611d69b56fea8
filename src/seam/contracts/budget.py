"""Spending limits a person sets, and the gate that checks them before each model call.

A runaway loop (a model that calls a tool forever, a heartbeat that never settles) spends
until someone notices. `BudgetLimits` caps tokens and cost per session, per day and per
cron job run; the limits come from `[budget]` in config.toml, a personality's own
`[budget]` table and a cron job's `--max-tokens` / `--max-usd`, and the tightest one that
applies wins. The loop asks its `BudgetGate` before every model call (not after the turn:
one call too many is the most a limit lets through), with what the call would be for
(`BudgetScope`); a `Refusal` ends the turn with its message, as its own outcome
(`budget`), which the coordinator settles without a retry.

`core/` reads no config: wiring builds the gate (`wiring/budget.py`) and hands it to the
loop at construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from seam.contracts.messages import EMPTY_USAGE, Usage

Period = Literal["session", "day", "job"]
Unit = Literal["tokens", "usd"]
PERIODS: tuple[Period, ...] = ("session", "day", "job")
UNITS: tuple[Unit, ...] = ("tokens", "usd")
# The config keys, in the order they are shown: `<period>_<unit>`.
BUDGET_KEYS: tuple[str, ...] = tuple(f"{p}_{u}" for p in PERIODS for u in UNITS)
# A turn that a limit stopped finishes with this reason (and a `halt` of the same name).
BUDGET_FINISH = "budget"


@dataclass(frozen=True, slots=True)
class PeriodLimits:
    """One unit's limits per period (tokens, or USD); 0 means no limit."""

    session: float = 0
    day: float = 0
    job: float = 0


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Limits in tokens (input plus output) and in USD, per period; 0 means no limit.
    Built from a table of `BUDGET_KEYS` with `of` ({"session_tokens": 10000})."""

    tokens: PeriodLimits = PeriodLimits()
    usd: PeriodLimits = PeriodLimits()

    def get(self, period: Period, unit: Unit) -> float:
        value: float = getattr(getattr(self, unit), period)
        return value

    def any(self) -> bool:
        """Whether any limit is set (a gate with none need not be built at all)."""
        return any(self.get(p, u) for p in PERIODS for u in UNITS)

    def table(self) -> dict[str, float]:
        """The limits as config.toml spells them: `BUDGET_KEYS` to values."""
        return {f"{p}_{u}": self.get(p, u) for p in PERIODS for u in UNITS}

    @classmethod
    def of(cls, values: Mapping[str, float]) -> BudgetLimits:
        """Limits from a table of `BUDGET_KEYS` (a missing key: no limit); ValueError
        naming the first bad key or value."""
        for key, value in values.items():
            if key not in BUDGET_KEYS:
                known = ", ".join(BUDGET_KEYS)
                raise ValueError(f"unknown key {key!r} (known: {known})")
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{key!r} must be a number of at least 0, not {value!r}")
        tokens = {p: int(values.get(f"{p}_tokens", 0)) for p in PERIODS}
        usd = {p: float(values.get(f"{p}_usd", 0)) for p in PERIODS}
        return cls(PeriodLimits(**tokens), PeriodLimits(**usd))


NO_LIMITS = BudgetLimits()


@dataclass(frozen=True, slots=True)
class BudgetScope:
    """What the next model call is for: its session (storage key), the personality it
    runs as (and that personality's own limits), the model that would answer, and what
    the turn has spent so far (a cron run's turn is the job's run). `name`: the session's
    public name ("cron:<job>:<slot>" for a cron run; "": the key); `tenant_prefix`: what
    every session key of its tenant starts with (the day's spend is the tenant's)."""

    session_key: str
    personality: str
    provider: str
    model: str
    limits: BudgetLimits = NO_LIMITS
    turn_usage: Usage = EMPTY_USAGE
    name: str = ""
    tenant_prefix: str = ""


@dataclass(frozen=True, slots=True)
class BudgetLine:
    """One applicable limit and the spend against it. `source` names where the limit is
    set ("[budget] session_tokens", "personality ops [budget] day_usd", "cron job ab12
    --max-tokens"); `unpriced`: some of the spend was by a model whose price is unknown
    (its cost is not in `spent`)."""

    period: Period
    unit: Unit
    spent: float
    allowed: float
    source: str
    unpriced: bool = False

    @property
    def reached(self) -> bool:
        return self.spent >= self.allowed


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a model call may not be made: the limit reached and the message for a person
    (what was spent, against which limit, and how to raise it)."""

    line: BudgetLine
    message: str


@runtime_checkable
class BudgetGate(Protocol):
    async def check(self, scope: BudgetScope) -> Refusal | None:
        """None: the call may go ahead; a `Refusal`: a limit is reached."""
        ...


def amount(unit: Unit, value: float) -> str:
    """`value` as a person reads it: "10,214 tokens", "$0.0123"."""
    if unit == "tokens":
        return f"{int(value):,} tokens"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


__all__ = [
    "BUDGET_FINISH",
    "BUDGET_KEYS",
    "NO_LIMITS",
    "PERIODS",
    "UNITS",
    "BudgetGate",
    "BudgetLimits",
    "BudgetLine",
    "BudgetScope",
    "Period",
    "PeriodLimits",
    "Refusal",
    "Unit",
    "amount",
]
