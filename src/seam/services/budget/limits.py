"""Which limits apply to a model call, and the words that tell a person one is reached.

For each period (session, day, cron job run) and unit (tokens, USD) the limits that could
apply are `[budget]` in config.toml, the personality's own `[budget]` and, for a cron
run, the job's `--max-tokens` / `--max-usd`; the tightest one set wins, and it keeps the
name of where it was set, so the message says what to raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from seam.contracts.budget import PERIODS, UNITS, BudgetLimits, BudgetLine, Period, Unit

CRON_PREFIX = "cron:"
FLAGS: dict[Unit, str] = {"tokens": "--max-tokens", "usd": "--max-usd"}


@dataclass(frozen=True, slots=True)
class Applicable:
    """One limit that applies: its period, unit, value and where it is set (`source`:
    "[budget] session_tokens"; `raise_in`: where a person raises it)."""

    period: Period
    unit: Unit
    allowed: float
    source: str
    raise_in: str


def job_of(name: str) -> str | None:
    """The cron job a session's turn runs for (its public name is `cron:<job>` or
    `cron:<job>:<slot>`), or None for a session no cron job runs."""
    if not name.startswith(CRON_PREFIX):
        return None
    job = name[len(CRON_PREFIX) :].split(":", 1)[0]
    return job or None


def applicable(
    config: BudgetLimits,
    personality: str,
    own: BudgetLimits,
    job: str | None,
    job_limits: BudgetLimits | None,
) -> list[Applicable]:
    """The tightest limit set for each period and unit (the job period only for a cron
    run), in the order they are shown."""
    return list(applicable_once(config, personality, own, job, job_limits))


@lru_cache(maxsize=256)
def applicable_once(
    config: BudgetLimits,
    personality: str,
    own: BudgetLimits,
    job: str | None,
    job_limits: BudgetLimits | None,
) -> tuple[Applicable, ...]:
    """`applicable`, worked out once per set of inputs: the gate asks before every model
    call, and the answer depends only on these frozen values (a limit configured or
    changed is a different key, so it applies at once). With no limit anywhere it is the
    empty tuple, found by one dictionary lookup."""
    found: list[Applicable] = []
    for period in PERIODS:
        if period == "job" and job is None:
            continue
        for unit in UNITS:
            options = _options(period, unit, config, personality, own)
            if job is not None and job_limits is not None:
                flag = FLAGS[unit]
                where = f"with `seam cron edit {job} {flag} ...`"
                allowed = job_limits.get(period, unit)
                options.append(Applicable(period, unit, allowed, f"cron job {job} {flag}", where))
            set_ones = [option for option in options if option.allowed > 0]
            if set_ones:
                found.append(min(set_ones, key=lambda option: option.allowed))
    return tuple(found)


def _options(
    period: Period, unit: Unit, config: BudgetLimits, personality: str, own: BudgetLimits
) -> list[Applicable]:
    """The config's and the personality's limit for one period and unit (0: not set)."""
    key = f"{period}_{unit}"
    return [
        Applicable(period, unit, config.get(period, unit), f"[budget] {key}", "in config.toml"),
        Applicable(
            period,
            unit,
            own.get(period, unit),
            f"personality {personality} [budget] {key}",
            f"in personalities/{personality}/config.toml",
        ),
    ]


WHO: dict[Period, str] = {
    "session": "this session has",
    "day": "today's calls have",
    "job": "this cron run has",
}
OR_ELSE: dict[Period, str] = {
    "session": " or start a new session",
    "day": " or wait for tomorrow",
    "job": "",
}


def spent_of(unit: Unit, spent: float, allowed: float) -> str:
    """ "10,214 of 10,000 tokens", "$0.0123 of $0.0100"."""
    if unit == "tokens":
        return f"{int(spent):,} of {int(allowed):,} tokens"
    places = 2 if allowed >= 1 else 4
    return f"${spent:,.{places}f} of ${allowed:,.{places}f}"


def refusal_message(line: BudgetLine, raise_in: str) -> str:
    """What a person reads when `line`'s limit stops a call."""
    unknown = (
        " (some calls' cost is unknown: their model has no price)"
        if line.unit == "usd" and line.unpriced
        else ""
    )
    return (
        f"budget: {WHO[line.period]} used {spent_of(line.unit, line.spent, line.allowed)}"
        f" ({line.source}){unknown}; raise it {raise_in}{OR_ELSE[line.period]}"
    )


__all__ = ["Applicable", "applicable", "applicable_once", "job_of", "refusal_message", "spent_of"]
