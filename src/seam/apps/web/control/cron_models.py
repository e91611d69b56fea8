"""The Cron section's request bodies, and how each says its schedule.

A body gives its schedule the way `seam cron add` does (exactly one of `every`, `cron`,
`at`, with `tz`) or as one `schedule` text read by its form (`30m`, `0 9 * * 1-5`,
`2026-12-24T18:00`), which is what the page's single field sends. What a schedule, zone,
target or policy may be is checked by the same `CronAdmin` the CLI uses, not here: the
bounds below only keep bodies small.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from seam.apps.web.errors import ApiError
from seam.contracts.cron import MissedPolicy
from seam.wiring.cron import JobOptions, ScheduleSpec, guessed_spec

SCHEDULE_FIELDS = ("schedule", "every", "cron", "at")
_OPTION_FIELDS = ("deliver", "personality", "missed", "continue_session", "urgent")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Preview(_Body):
    """A schedule to preview: its text, read by its form, in a time zone."""

    schedule: str = Field(min_length=1, max_length=200)
    tz: str = Field("UTC", min_length=1, max_length=100)


class JobChange(_Body):
    """What `PATCH /api/cron/jobs/{id}` changes (absent fields stay as they are)."""

    prompt: str | None = Field(None, min_length=1, max_length=20_000)
    schedule: str | None = Field(None, min_length=1, max_length=200)
    every: str | None = Field(None, min_length=1, max_length=50)
    cron: str | None = Field(None, min_length=1, max_length=200)
    at: str | None = Field(None, min_length=1, max_length=100)
    tz: str | None = Field(None, min_length=1, max_length=100)
    deliver: str | None = Field(None, min_length=1, max_length=2_000)
    personality: str | None = Field(None, min_length=1, max_length=100)
    missed: MissedPolicy | None = None
    continue_session: bool | None = None
    urgent: bool | None = None


class NewJob(_Body):
    """A job as `seam cron add` takes it (`continue_session` is `--continue`)."""

    prompt: str = Field(min_length=1, max_length=20_000)
    schedule: str | None = Field(None, min_length=1, max_length=200)
    every: str | None = Field(None, min_length=1, max_length=50)
    cron: str | None = Field(None, min_length=1, max_length=200)
    at: str | None = Field(None, min_length=1, max_length=100)
    tz: str = Field("UTC", min_length=1, max_length=100)
    deliver: str = Field("owner", min_length=1, max_length=2_000)
    personality: str | None = Field(None, min_length=1, max_length=100)
    missed: MissedPolicy = "skip"
    continue_session: bool = False
    urgent: bool = False


def schedule_spec(given: dict[str, Any], tz: str) -> ScheduleSpec:
    """The spec of a body's schedule fields (those it set); 400 unless exactly one."""
    named = [name for name in SCHEDULE_FIELDS if given.get(name) is not None]
    if len(named) != 1:
        raise ApiError(400, "give exactly one schedule: schedule, every, cron or at")
    if named[0] == "schedule":
        return guessed_spec(str(given["schedule"]), tz)
    return ScheduleSpec(**{named[0]: str(given[named[0]])}, tz=tz)


def job_options(given: dict[str, Any]) -> JobOptions:
    """The job options a body set; `null` leaves one as it is, but `personality: null`
    clears it (the job runs as the default personality)."""
    options = JobOptions()
    for name in _OPTION_FIELDS:
        if name in given and (given[name] is not None or name == "personality"):
            options[name] = given[name]  # type: ignore[literal-required]
    return options


def changed_spec(given: dict[str, Any], old: ScheduleSpec) -> ScheduleSpec | None:
    """The schedule a change asks for: new schedule text, a new zone, or both; None
    when it asks for neither (the job keeps its schedule and its next slot)."""
    tz = given.get("tz") or old.tz
    if any(given.get(name) is not None for name in SCHEDULE_FIELDS):
        return schedule_spec(given, tz)
    return dataclasses.replace(old, tz=tz) if tz != old.tz else None


__all__ = ["JobChange", "NewJob", "Preview", "changed_spec", "job_options", "schedule_spec"]
