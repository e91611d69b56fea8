"""The `[dnd]` and `[heartbeat]` sections (their models; `wiring/delivery.py` and
`wiring/heartbeat.py` build from them).

    [dnd]
    rules = [{start = "22:00", end = "07:00", weekdays = ["mon", "tue"], tz = "Europe/Berlin"}]

    [heartbeat]
    every = "30m"          # off when empty (the default)
    personality = ""       # whose HEARTBEAT.md and model; empty: [agent] personality
    deliver = "owner"      # where a heartbeat that found something goes
    tools = []             # tools a beat may use; none by default (a lean prompt)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from seam.wiring.durations import parse_duration

if TYPE_CHECKING:
    from seam.contracts.dnd import DndRule

# The rules themselves (plugins/dnd) are imported by a `[dnd]` rule being read: every run
# loads these models, few have quiet hours.


def _every_day() -> list[str]:
    from seam.plugins.dnd.rules import WEEKDAYS

    return list(WEEKDAYS)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # as settings._Section


class DndRuleSection(_Section):
    start: str
    end: str
    weekdays: list[str] = Field(default_factory=_every_day)
    tz: str = "UTC"

    @model_validator(mode="after")
    def _readable(self) -> DndRuleSection:
        from seam.plugins.dnd.rules import RuleError, make_rule

        try:
            make_rule(self.start, self.end, self.weekdays, self.tz)
        except RuleError as exc:
            raise ValueError(str(exc)) from None
        return self

    def rule(self) -> DndRule:
        from seam.plugins.dnd.rules import make_rule

        return make_rule(self.start, self.end, self.weekdays, self.tz)


class DndSection(_Section):
    """Quiet hours: deliveries due in a window wait until it ends (urgent ones go)."""

    rules: list[DndRuleSection] = Field(default_factory=list)


class HeartbeatSection(_Section):
    every: str = ""
    personality: str = ""
    deliver: str = "owner"
    # Tools a beat may use (their schemas cost prompt tokens every beat); none by default.
    tools: list[str] = Field(default_factory=list)

    @field_validator("every")
    @classmethod
    def _duration(cls, value: str) -> str:
        seconds = parse_duration(value)
        if 0 < seconds < 60:
            raise ValueError(f"must be at least 1m (a heartbeat is a model call), got {value!r}")
        return value

    @property
    def every_seconds(self) -> float:
        return parse_duration(self.every)
